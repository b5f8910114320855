// See include/png_incremental.h.
#include "png_incremental.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

typedef enum { READING, DONE, FAILED } phase;

struct wi_png_incremental {
    png_structp png;
    png_infop info;
    jmp_buf jump;
    phase phase;
    uint64_t max_pixels;
    int width, height, interlaced, pass;
    long rows;          // data rows written into the canvas, over all passes
    uint8_t *canvas;    // width * height * 4 bytes, zeroed at allocation
};

static void fail(png_structp png, png_const_charp message) {
    (void)message;
    wi_png_incremental *decoder = png_get_error_ptr(png);
    longjmp(decoder->jump, 1);
}

static void quiet(png_structp png, png_const_charp message) { (void)png; (void)message; }  // previews are lenient

/// IHDR and the chunks before the image data are in: sets the transforms to RGBA8, checks the
/// pixel limit, then allocates the canvas. Runs under append's setjmp.
static void on_info(png_structp png, png_infop info) {
    wi_png_incremental *decoder = png_get_progressive_ptr(png);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    if (width == 0 || height == 0 || (uint64_t)width * height > decoder->max_pixels) png_error(png, "too many pixels");
    int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_strip_16(png);  // the high byte, as libspng's RGBA8 (PNGCoder.decode)
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!(color & PNG_COLOR_MASK_ALPHA) && !png_get_valid(png, info, PNG_INFO_tRNS)) png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    decoder->interlaced = png_set_interlace_handling(png) > 1;
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) png_error(png, "not RGBA8 after the transforms");
    decoder->canvas = calloc((size_t)width * height, 4);
    if (!decoder->canvas) png_error(png, "out of memory");
    decoder->width = (int)width;
    decoder->height = (int)height;
}

/// One row of one pass. With interlace handling libpng calls this for every row of every pass,
/// `row` NULL where the pass leaves the row unchanged, and a pass's row again for each canvas
/// row its pixels' blocks cover; combine_row writes each pixel across its block's width, so
/// after a pass every pixel decoded so far fills its Adam7 block.
static void on_row(png_structp png, png_bytep row, png_uint_32 number, int pass) {
    wi_png_incremental *decoder = png_get_progressive_ptr(png);
    if (row == NULL || number >= (png_uint_32)decoder->height) return;
    png_bytep target = decoder->canvas + (size_t)number * decoder->width * 4;
    if (decoder->interlaced) {
        png_progressive_combine_row(png, target, row);
    } else {
        memcpy(target, row, (size_t)decoder->width * 4);
    }
    decoder->pass = pass;
    decoder->rows += 1;
}

static void on_end(png_structp png, png_infop info) {
    (void)info;
    wi_png_incremental *decoder = png_get_progressive_ptr(png);
    decoder->phase = DONE;
}

wi_png_incremental *wi_png_incremental_create(uint64_t max_pixels) {
    wi_png_incremental *decoder = calloc(1, sizeof *decoder);
    if (!decoder) return NULL;
    decoder->max_pixels = max_pixels;
    // Set before libpng is created: its error function (fail) jumps here from the start.
    if (setjmp(decoder->jump)) {
        wi_png_incremental_destroy(decoder);
        return NULL;
    }
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, decoder, fail, quiet);
    if (!decoder->png) longjmp(decoder->jump, 1);
    decoder->info = png_create_info_struct(decoder->png);
    if (!decoder->info) longjmp(decoder->jump, 1);
    // The limits of PNGCoder's libspng decoder: 2^24 pixels a side, metadata chunks of 16 MB.
    png_set_user_limits(decoder->png, 1 << 24, 1 << 24);
    png_set_chunk_malloc_max(decoder->png, 16 << 20);
    png_set_progressive_read_fn(decoder->png, decoder, on_info, on_row, on_end);
    decoder->phase = READING;
    return decoder;
}

void wi_png_incremental_destroy(wi_png_incremental *decoder) {
    if (!decoder) return;
    // Either pointer may be NULL (a failed create); libpng then frees what there is.
    png_destroy_read_struct(&decoder->png, decoder->info ? &decoder->info : NULL, NULL);
    free(decoder->canvas);
    free(decoder);
}

wi_png_status wi_png_incremental_append(wi_png_incremental *decoder, const uint8_t *bytes, size_t count) {
    if (decoder->phase == READING && count > 0) {
        if (setjmp(decoder->jump)) {
            decoder->phase = FAILED;
        } else {
            png_process_data(decoder->png, decoder->info, (png_bytep)bytes, count);
        }
    }
    switch (decoder->phase) {
    case FAILED: return WI_PNG_FAILED;
    case DONE: return WI_PNG_DONE;
    default: return WI_PNG_NEEDS_DATA;
    }
}

void wi_png_incremental_size(const wi_png_incremental *decoder, int *width, int *height) {
    *width = decoder->width;
    *height = decoder->height;
}

int wi_png_incremental_interlaced(const wi_png_incremental *decoder) { return decoder->interlaced; }

long wi_png_incremental_rows(const wi_png_incremental *decoder) { return decoder->rows; }

int wi_png_incremental_pass(const wi_png_incremental *decoder) { return decoder->pass; }

const uint8_t *wi_png_incremental_canvas(const wi_png_incremental *decoder) { return decoder->canvas; }
