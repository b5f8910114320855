// See include/jpeg_rows.h.
#include "jpeg_rows.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct wi_jpeg_rows {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    void (*standard_emit)(j_common_ptr, int);
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int created;
    int started;
    int warned;
    int stopped;
    int max_scans;
    wi_jpeg_rows_should_stop should_stop;
    char message[JMSG_LENGTH_MAX];
};

static void error_exit(j_common_ptr cinfo) {
    wi_jpeg_rows *decoder = (wi_jpeg_rows *)cinfo->client_data;
    cinfo->err->format_message(cinfo, decoder->message);
    longjmp(decoder->jump, 1);
}

// libjpeg's own emit_message shows the first warning only; it comes here instead of stderr.
static void output_message(j_common_ptr cinfo) {
    wi_jpeg_rows *decoder = (wi_jpeg_rows *)cinfo->client_data;
    cinfo->err->format_message(cinfo, decoder->message);
}

static void emit_message(j_common_ptr cinfo, int level) {
    wi_jpeg_rows *decoder = (wi_jpeg_rows *)cinfo->client_data;
    decoder->standard_emit(cinfo, level);
    if (level < 0) decoder->warned = 1;
}

// Called by libjpeg between rows of input (and once per jpeg_read_scanlines call).
static void progress_monitor(j_common_ptr cinfo) {
    wi_jpeg_rows *decoder = (wi_jpeg_rows *)cinfo->client_data;
    if (decoder->cinfo.input_scan_number > decoder->max_scans) {
        snprintf(decoder->message, sizeof decoder->message,
                 "Progressive JPEG image has more than %d scans", decoder->max_scans);
        decoder->warned = 0;  // an error, whatever came before (as TurboJPEG reports it)
        longjmp(decoder->jump, 1);
    }
    if (decoder->should_stop && decoder->should_stop()) {
        decoder->stopped = 1;
        longjmp(decoder->jump, 1);
    }
}

wi_jpeg_rows *wi_jpeg_rows_create(void) {
    wi_jpeg_rows *decoder = calloc(1, sizeof *decoder);
    if (!decoder) return NULL;
    decoder->cinfo.err = jpeg_std_error(&decoder->errors);
    decoder->standard_emit = decoder->errors.emit_message;
    decoder->errors.error_exit = error_exit;
    decoder->errors.output_message = output_message;
    decoder->errors.emit_message = emit_message;
    decoder->cinfo.client_data = decoder;
    if (setjmp(decoder->jump)) {
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->created = 1;
    return decoder;
}

void wi_jpeg_rows_destroy(wi_jpeg_rows *decoder) {
    if (!decoder) return;
    if (decoder->created) jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder);
}

wi_jpeg_rows_status wi_jpeg_rows_start(
    wi_jpeg_rows *decoder, const uint8_t *data, size_t size, int scale_num, int scale_denom, int cmyk,
    int max_scans, wi_jpeg_rows_should_stop should_stop, int *width, int *height) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    if (decoder->started || size == 0) {
        snprintf(decoder->message, sizeof decoder->message, "invalid argument");
        return WI_JPEG_ROWS_FAILED;
    }
    decoder->started = 1;
    decoder->max_scans = max_scans;
    decoder->should_stop = should_stop;
    decoder->progress.progress_monitor = progress_monitor;
    cinfo->progress = &decoder->progress;
    if (setjmp(decoder->jump)) {
        decoder->should_stop = NULL;
        return decoder->stopped ? WI_JPEG_ROWS_STOPPED : WI_JPEG_ROWS_FAILED;
    }
    jpeg_mem_src(cinfo, data, (unsigned long)size);
    jpeg_read_header(cinfo, TRUE);
    cinfo->out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    cinfo->scale_num = (unsigned int)scale_num;
    cinfo->scale_denom = (unsigned int)scale_denom;
    jpeg_start_decompress(cinfo);
    decoder->should_stop = NULL;  // output rows: the caller asks between batches
    *width = (int)cinfo->output_width;
    *height = (int)cinfo->output_height;
    return WI_JPEG_ROWS_OK;
}

int wi_jpeg_rows_read(wi_jpeg_rows *decoder, uint8_t *out, size_t stride, int count) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    if (cinfo->output_components != 4) return -1;  // RGBA and CMYK only: the caller's 4 bytes a pixel
    int done = 0;
    if (setjmp(decoder->jump)) return -1;
    while (done < count && cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW rows[16];
        int batch = count - done < 16 ? count - done : 16;
        for (int i = 0; i < batch; i++) rows[i] = out + (size_t)(done + i) * stride;
        JDIMENSION got = jpeg_read_scanlines(cinfo, rows, (JDIMENSION)batch);
        if (got == 0) break;  // cannot happen with a memory source
        done += (int)got;
    }
    return done;
}

wi_jpeg_rows_status wi_jpeg_rows_finish(wi_jpeg_rows *decoder) {
    if (setjmp(decoder->jump)) return WI_JPEG_ROWS_FAILED;
    jpeg_finish_decompress(&decoder->cinfo);
    return WI_JPEG_ROWS_OK;
}

int wi_jpeg_rows_warned(const wi_jpeg_rows *decoder) { return decoder->warned; }

const char *wi_jpeg_rows_message(const wi_jpeg_rows *decoder) { return decoder->message; }
