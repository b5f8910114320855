// A JPEG written from RGBA rows with libjpeg's own API, with the settings TurboJPEG's tjCompress2
// uses (so the bytes are the same), asking `should_stop` between batches of rows and between the
// passes of a progressive file: a caller can stop a large encode. Every libjpeg call runs under
// setjmp: an error is a returned status, never an exit.
#ifndef WEBIMAGE_JPEG_WRITE_H
#define WEBIMAGE_JPEG_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "jpeg_rows.h"

/// Writes `height` rows of `width` RGBA pixels (`stride` bytes apart; alpha ignored) at `quality`
/// (1–100): 4:2:0 YCbCr, or grayscale when `gray` is non-zero, progressive when `progressive` is.
/// On OK `*out` (free it with `free`) holds `*out_size` bytes. On FAILED `message` says why.
wi_jpeg_rows_status wi_jpeg_write(
    const uint8_t *pixels, int width, int height, size_t stride, int quality, int gray, int progressive,
    wi_jpeg_rows_should_stop should_stop, uint8_t **out, unsigned long *out_size, char *message, size_t message_size);

#endif
