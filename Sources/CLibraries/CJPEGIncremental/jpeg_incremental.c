// See include/jpeg_incremental.h.
#include "jpeg_incremental.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

typedef enum { READING_HEADER, WAITING_FOR_CANVAS, STARTING, SEQUENTIAL, PROGRESSIVE, FINISHING_OUTPUT, DONE, FAILED } phase;

struct wi_jpeg_incremental {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    jmp_buf jump;
    struct jpeg_source_mgr source;
    uint8_t *buffer;       // bytes received and not yet consumed, from buffer[0]
    size_t capacity;
    size_t skip;           // bytes libjpeg asked to skip beyond those received
    phase phase;
    int max_scans;
    uint8_t *canvas;
    size_t stride;
    int completed_scan;    // the last scan whose data is complete (progressive)
    int shown_scan;        // the scan the canvas shows (progressive)
};

static void error_exit(j_common_ptr cinfo) {
    wi_jpeg_incremental *decoder = (wi_jpeg_incremental *)cinfo->client_data;
    longjmp(decoder->jump, 1);
}

static void quiet(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }  // previews are lenient

static void init_source(j_decompress_ptr cinfo) { (void)cinfo; }
static boolean fill_input_buffer(j_decompress_ptr cinfo) { (void)cinfo; return FALSE; }  // suspend
static void term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static void skip_input_data(j_decompress_ptr cinfo, long count) {
    wi_jpeg_incremental *decoder = (wi_jpeg_incremental *)cinfo->client_data;
    if (count <= 0) return;
    size_t n = (size_t)count;
    if (n <= cinfo->src->bytes_in_buffer) {
        cinfo->src->next_input_byte += n;
        cinfo->src->bytes_in_buffer -= n;
    } else {
        decoder->skip += n - cinfo->src->bytes_in_buffer;
        cinfo->src->next_input_byte += cinfo->src->bytes_in_buffer;
        cinfo->src->bytes_in_buffer = 0;
    }
}

wi_jpeg_incremental *wi_jpeg_incremental_create(int max_scans) {
    wi_jpeg_incremental *decoder = calloc(1, sizeof *decoder);
    if (!decoder) return NULL;
    decoder->cinfo.err = jpeg_std_error(&decoder->errors);
    decoder->errors.error_exit = error_exit;
    decoder->errors.emit_message = quiet;
    decoder->cinfo.client_data = decoder;
    decoder->max_scans = max_scans;
    if (setjmp(decoder->jump)) {
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->source.init_source = init_source;
    decoder->source.fill_input_buffer = fill_input_buffer;
    decoder->source.skip_input_data = skip_input_data;
    decoder->source.resync_to_restart = jpeg_resync_to_restart;
    decoder->source.term_source = term_source;
    decoder->source.next_input_byte = NULL;
    decoder->source.bytes_in_buffer = 0;
    decoder->cinfo.src = &decoder->source;
    decoder->phase = READING_HEADER;
    return decoder;
}

void wi_jpeg_incremental_destroy(wi_jpeg_incremental *decoder) {
    if (!decoder) return;
    jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder->buffer);
    free(decoder);
}

void wi_jpeg_incremental_size(const wi_jpeg_incremental *decoder, int *width, int *height) {
    *width = (int)decoder->cinfo.image_width;
    *height = (int)decoder->cinfo.image_height;
}

/// Reads sequential rows into the canvas until the data runs out; 1 when all are read.
static int read_rows(wi_jpeg_incremental *decoder) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = decoder->canvas + (size_t)cinfo->output_scanline * decoder->stride;
        if (jpeg_read_scanlines(cinfo, &row, 1) == 0) return 0;
    }
    return 1;
}

/// Decodes as far as the bytes allow (only the input for a progressive file: output passes are
/// made by render). Runs under the caller's setjmp.
static void advance(wi_jpeg_incremental *decoder) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    for (;;) {
        switch (decoder->phase) {
        case READING_HEADER:
            if (jpeg_read_header(cinfo, TRUE) == JPEG_SUSPENDED) return;
            if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
                decoder->phase = FAILED;  // no RGBA output for CMYK in libjpeg
                return;
            }
            decoder->phase = WAITING_FOR_CANVAS;
            return;
        case WAITING_FOR_CANVAS:
        case DONE:
        case FAILED:
            return;
        case STARTING:
            cinfo->out_color_space = JCS_EXT_RGBA;
            cinfo->buffered_image = jpeg_has_multiple_scans(cinfo);
            if (!jpeg_start_decompress(cinfo)) return;
            decoder->phase = cinfo->buffered_image ? PROGRESSIVE : SEQUENTIAL;
            break;
        case SEQUENTIAL:
            if (!read_rows(decoder)) return;
            jpeg_finish_decompress(cinfo);
            decoder->phase = DONE;
            return;
        case FINISHING_OUTPUT:
            if (!jpeg_finish_output(cinfo)) return;
            decoder->phase = PROGRESSIVE;
            break;
        case PROGRESSIVE:
            for (;;) {
                int status = jpeg_consume_input(cinfo);
                if (status == JPEG_SUSPENDED) return;
                if (cinfo->input_scan_number > decoder->max_scans) longjmp(decoder->jump, 1);  // scan bomb
                if (status == JPEG_SCAN_COMPLETED) decoder->completed_scan = cinfo->input_scan_number;
                if (status == JPEG_REACHED_EOI) {
                    decoder->completed_scan = cinfo->input_scan_number;
                    decoder->phase = DONE;
                    return;
                }
            }
        }
    }
}

/// Runs `advance` under setjmp; a libjpeg error fails the decoder for good.
static wi_jpeg_status run(wi_jpeg_incremental *decoder) {
    if (decoder->phase != FAILED) {
        if (setjmp(decoder->jump)) {
            decoder->phase = FAILED;
        } else {
            advance(decoder);
        }
    }
    switch (decoder->phase) {
    case FAILED: return WI_JPEG_FAILED;
    case READING_HEADER: return WI_JPEG_NEEDS_DATA;
    case WAITING_FOR_CANVAS: return WI_JPEG_HEADER_READY;
    case DONE: return WI_JPEG_DONE;
    default: return WI_JPEG_DECODING;
    }
}

wi_jpeg_status wi_jpeg_incremental_append(wi_jpeg_incremental *decoder, const uint8_t *bytes, size_t count) {
    if (decoder->phase == FAILED) return WI_JPEG_FAILED;
    if (decoder->skip >= count) {
        decoder->skip -= count;
        return run(decoder);
    }
    bytes += decoder->skip;
    count -= decoder->skip;
    decoder->skip = 0;
    // Keep the unconsumed bytes at the start of the buffer, then the new ones after them.
    size_t left = decoder->source.bytes_in_buffer;
    if (left > 0 && decoder->source.next_input_byte != decoder->buffer) {
        memmove(decoder->buffer, decoder->source.next_input_byte, left);
    }
    if (left + count > decoder->capacity) {
        size_t capacity = decoder->capacity * 2 > left + count ? decoder->capacity * 2 : left + count;
        uint8_t *grown = realloc(decoder->buffer, capacity);
        if (!grown) {
            decoder->phase = FAILED;
            return WI_JPEG_FAILED;
        }
        decoder->buffer = grown;
        decoder->capacity = capacity;
    }
    memcpy(decoder->buffer + left, bytes, count);
    decoder->source.next_input_byte = decoder->buffer;
    decoder->source.bytes_in_buffer = left + count;
    return run(decoder);
}

wi_jpeg_status wi_jpeg_incremental_start(wi_jpeg_incremental *decoder, uint8_t *canvas, size_t stride) {
    if (decoder->phase != WAITING_FOR_CANVAS) return decoder->phase == FAILED ? WI_JPEG_FAILED : run(decoder);
    decoder->canvas = canvas;
    decoder->stride = stride;
    decoder->phase = STARTING;
    return run(decoder);
}

int wi_jpeg_incremental_render(wi_jpeg_incremental *decoder) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    if (decoder->phase == FAILED || decoder->canvas == NULL) return decoder->phase == FAILED ? -1 : 0;
    if (!cinfo->buffered_image) return (int)cinfo->output_scanline;
    if (decoder->phase == STARTING) return 0;
    // An output pass of the scan input is still in (even complete, until the next scan starts)
    // would make libjpeg read on, and suspend in the middle of the pass: show the one before.
    int scan = decoder->completed_scan;
    if (decoder->phase != DONE && cinfo->input_scan_number <= scan) scan -= 1;
    if (scan <= 0 || scan == decoder->shown_scan || decoder->phase == FINISHING_OUTPUT) {
        return decoder->shown_scan > 0 ? (int)cinfo->output_height : 0;
    }
    if (setjmp(decoder->jump)) {
        decoder->phase = FAILED;
        return -1;
    }
    // The input is past this scan, so the output pass reads no input and cannot suspend.
    if (!jpeg_start_output(cinfo, scan)) return decoder->shown_scan > 0 ? (int)cinfo->output_height : 0;
    if (!read_rows(decoder)) longjmp(decoder->jump, 1);
    decoder->shown_scan = scan;
    if (decoder->phase == DONE) {
        jpeg_finish_output(cinfo);
        jpeg_finish_decompress(cinfo);
    } else if (!jpeg_finish_output(cinfo)) {
        decoder->phase = FINISHING_OUTPUT;  // it reads on to the next scan's start: later
    }
    return (int)cinfo->output_height;
}
