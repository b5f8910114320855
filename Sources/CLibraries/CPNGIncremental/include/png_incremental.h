// A PNG decoded as its bytes arrive: libpng's progressive (push) reader, which keeps its zlib
// stream and row state between calls, so each byte is decoded once. Every libpng call runs under
// setjmp, so a libpng error becomes a returned status, never an exit or an abort. Every colour
// type and bit depth comes out as straight (not premultiplied) RGBA8. Not thread-safe: one caller
// at a time per decoder.
#ifndef WEBIMAGE_PNG_INCREMENTAL_H
#define WEBIMAGE_PNG_INCREMENTAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct wi_png_incremental wi_png_incremental;

typedef enum {
    WI_PNG_FAILED = -1,     // corrupt data, over the pixel limit, out of memory
    WI_PNG_NEEDS_DATA = 0,  // waiting for more bytes (rows may have been decoded)
    WI_PNG_DONE = 1,        // the whole image is in the canvas
} wi_png_status;

/// A decoder that refuses images of more than `max_pixels` pixels (width × height) before it
/// allocates their canvas; NULL when out of memory.
wi_png_incremental *wi_png_incremental_create(uint64_t max_pixels);
void wi_png_incremental_destroy(wi_png_incremental *decoder);

/// Decodes the `count` bytes after the ones given so far, as far as they allow.
wi_png_status wi_png_incremental_append(wi_png_incremental *decoder, const uint8_t *bytes, size_t count);

/// The image size once the header has been read, else 0 × 0.
void wi_png_incremental_size(const wi_png_incremental *decoder, int *width, int *height);

/// Whether the file is Adam7-interlaced (known with the size).
int wi_png_incremental_interlaced(const wi_png_incremental *decoder);

/// How many canvas rows have been written so far: a plain image's rows from the top (`height`
/// when complete); for an interlaced one a row counts again for every pass that writes it
/// (a pass's row is written into each row its pixels' blocks cover). 0 while nothing is shown.
long wi_png_incremental_rows(const wi_png_incremental *decoder);

/// The pass being decoded (0 to 6; 0 for a plain image).
int wi_png_incremental_pass(const wi_png_incremental *decoder);

/// The RGBA8 canvas: `height` rows of `width * 4` bytes, zeroed where nothing has been decoded,
/// owned by the decoder; NULL before the header. An interlaced image's pixels fill their Adam7
/// block (8×8 after the first pass, down to 1×1), so the whole picture appears coarse first.
const uint8_t *wi_png_incremental_canvas(const wi_png_incremental *decoder);

#endif
