// A JPEG decoded as its bytes arrive: libjpeg with a suspending data source, in buffered-image
// mode for progressive files. Every libjpeg call runs under setjmp, so a libjpeg error becomes a
// returned status, never an exit. Not thread-safe: one caller at a time per decoder.
#ifndef WEBIMAGE_JPEG_INCREMENTAL_H
#define WEBIMAGE_JPEG_INCREMENTAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct wi_jpeg_incremental wi_jpeg_incremental;

typedef enum {
    WI_JPEG_FAILED = -1,       // corrupt data, unsupported colour space, too many scans, out of memory
    WI_JPEG_NEEDS_DATA = 0,    // waiting for more bytes
    WI_JPEG_HEADER_READY = 1,  // size known: call wi_jpeg_incremental_start with a canvas
    WI_JPEG_DECODING = 2,      // the canvas is being filled
    WI_JPEG_DONE = 3,          // the whole image is in the canvas
} wi_jpeg_status;

wi_jpeg_incremental *wi_jpeg_incremental_create(int max_scans);
void wi_jpeg_incremental_destroy(wi_jpeg_incremental *decoder);

/// Copies `count` bytes after the ones given so far and decodes what they allow.
wi_jpeg_status wi_jpeg_incremental_append(wi_jpeg_incremental *decoder, const uint8_t *bytes, size_t count);

/// The image size, once the status has been WI_JPEG_HEADER_READY.
void wi_jpeg_incremental_size(const wi_jpeg_incremental *decoder, int *width, int *height);

/// Gives the RGBA8 canvas (`height` rows of `stride` bytes, zeroed, owned by the caller and kept
/// alive until destroy) and decodes what the bytes so far allow.
wi_jpeg_status wi_jpeg_incremental_start(wi_jpeg_incremental *decoder, uint8_t *canvas, size_t stride);

/// Makes the canvas show what has been decoded: for a progressive file, an output pass of the
/// last complete scan (the whole picture, sharper with each scan); for a sequential one the rows
/// so far. Returns how many rows from the top hold picture (all of them for a progressive pass),
/// 0 when there is nothing to show yet, -1 on failure.
int wi_jpeg_incremental_render(wi_jpeg_incremental *decoder);

#endif
