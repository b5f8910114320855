// A whole JPEG in memory decoded a batch of rows at a time, so that the caller can stop between
// batches (a cancelled request). The same libjpeg settings as TurboJPEG's tjDecompress2 (islow
// DCT, fancy upsampling, the scaling factor given, a limit on progressive scans), so the pixels
// are the same. Every libjpeg call runs under setjmp: an error is a returned status, never an
// exit. Not thread-safe: one caller at a time per decoder.
#ifndef WEBIMAGE_JPEG_ROWS_H
#define WEBIMAGE_JPEG_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wi_jpeg_rows wi_jpeg_rows;

typedef enum {
    WI_JPEG_ROWS_FAILED = -1,     // a libjpeg error: wi_jpeg_rows_message says which
    WI_JPEG_ROWS_OK = 0,
    WI_JPEG_ROWS_STOPPED = 1,     // should_stop returned non-zero
} wi_jpeg_rows_status;

/// Asked between rows of input while a multi-scan file is read (before any output row):
/// non-zero stops the decode.
typedef int (*wi_jpeg_rows_should_stop)(void);

wi_jpeg_rows *wi_jpeg_rows_create(void);
void wi_jpeg_rows_destroy(wi_jpeg_rows *decoder);

/// Reads the header of `data` (`size` bytes, kept alive by the caller until destroy) and starts
/// the decode at `scale_num`/`scale_denom`, to RGBA (or to CMYK when `cmyk` is non-zero). A
/// progressive file's input is all read here, asking `should_stop` (may be NULL) between rows.
/// On success `width` and `height` are the output size.
wi_jpeg_rows_status wi_jpeg_rows_start(
    wi_jpeg_rows *decoder, const uint8_t *data, size_t size, int scale_num, int scale_denom, int cmyk,
    int max_scans, wi_jpeg_rows_should_stop should_stop, int *width, int *height);

/// Writes the next `count` rows (or fewer at the end) of 4 bytes a pixel to `out`, `stride`
/// bytes apart. Returns how many were written, or -1 on failure.
int wi_jpeg_rows_read(wi_jpeg_rows *decoder, uint8_t *out, size_t stride, int count);

/// Reads to the end of the file once every row is out. OK or FAILED.
wi_jpeg_rows_status wi_jpeg_rows_finish(wi_jpeg_rows *decoder);

/// Whether libjpeg warned (corrupt data it worked around, a premature end), as TurboJPEG's
/// TJERR_WARNING: it stays set after a later error.
int wi_jpeg_rows_warned(const wi_jpeg_rows *decoder);

/// The first warning's text, or the error's when one ended the decode (as TurboJPEG reports).
const char *wi_jpeg_rows_message(const wi_jpeg_rows *decoder);

#endif
