// See include/jpeg_write.h.
#include "jpeg_write.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

struct writer {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    struct jpeg_destination_mgr destination;
    jmp_buf jump;
    int stopped;
    wi_jpeg_rows_should_stop should_stop;
    // The output, grown by doubling; owned here (libjpeg's own jpeg_mem_dest frees a buffer it
    // outgrew but leaves the caller its old address until the end, so an error mid-way cannot
    // free it safely). In the struct, not in locals, so a longjmp cannot lose it.
    unsigned char *buffer;
    size_t capacity;
    char message[JMSG_LENGTH_MAX];
};

static void write_error_exit(j_common_ptr cinfo) {
    struct writer *writer = (struct writer *)cinfo->client_data;
    cinfo->err->format_message(cinfo, writer->message);
    longjmp(writer->jump, 1);
}

static void write_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void destination_init(j_compress_ptr cinfo) {
    struct writer *writer = (struct writer *)cinfo->client_data;
    writer->capacity = 65536;
    writer->buffer = malloc(writer->capacity);
    if (!writer->buffer) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    writer->destination.next_output_byte = writer->buffer;
    writer->destination.free_in_buffer = writer->capacity;
}

// The buffer is full: double it.
static boolean destination_empty(j_compress_ptr cinfo) {
    struct writer *writer = (struct writer *)cinfo->client_data;
    size_t used = writer->capacity;
    if (used > ((size_t)-1) / 2) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 1);
    unsigned char *grown = realloc(writer->buffer, used * 2);
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 2);
    writer->buffer = grown;
    writer->capacity = used * 2;
    writer->destination.next_output_byte = grown + used;
    writer->destination.free_in_buffer = writer->capacity - used;
    return TRUE;
}

static void destination_term(j_compress_ptr cinfo) { (void)cinfo; }

// Called by libjpeg once per jpeg_write_scanlines call and per iMCU row of every later pass.
static void write_progress(j_common_ptr cinfo) {
    struct writer *writer = (struct writer *)cinfo->client_data;
    if (writer->should_stop && writer->should_stop()) {
        writer->stopped = 1;
        longjmp(writer->jump, 1);
    }
}

wi_jpeg_rows_status wi_jpeg_write(
    const uint8_t *pixels, int width, int height, size_t stride, int quality, int gray, int progressive,
    wi_jpeg_rows_should_stop should_stop, uint8_t **out, unsigned long *out_size, char *message, size_t message_size) {
    *out = NULL;
    *out_size = 0;
    struct writer *writer = calloc(1, sizeof *writer);
    if (!writer) {
        snprintf(message, message_size, "out of memory");
        return WI_JPEG_ROWS_FAILED;
    }
    writer->should_stop = should_stop;
    writer->cinfo.err = jpeg_std_error(&writer->errors);
    writer->errors.error_exit = write_error_exit;
    writer->errors.output_message = write_output_message;
    writer->cinfo.client_data = writer;
    if (setjmp(writer->jump)) {
        wi_jpeg_rows_status status = writer->stopped ? WI_JPEG_ROWS_STOPPED : WI_JPEG_ROWS_FAILED;
        snprintf(message, message_size, "%s", writer->stopped ? "stopped" : writer->message);
        jpeg_destroy_compress(&writer->cinfo);
        free(writer->buffer);
        free(writer);
        return status;
    }
    jpeg_create_compress(&writer->cinfo);
    writer->progress.progress_monitor = write_progress;
    writer->cinfo.progress = &writer->progress;
    writer->destination.init_destination = destination_init;
    writer->destination.empty_output_buffer = destination_empty;
    writer->destination.term_destination = destination_term;
    writer->cinfo.dest = &writer->destination;
    writer->cinfo.image_width = (JDIMENSION)width;
    writer->cinfo.image_height = (JDIMENSION)height;
    writer->cinfo.in_color_space = JCS_EXT_RGBA;
    writer->cinfo.input_components = 4;
    jpeg_set_defaults(&writer->cinfo);
    // As tjCompress2 (libjpeg-turbo 2.1): the accurate DCT from quality 96, the fast one below.
    jpeg_set_quality(&writer->cinfo, quality, TRUE);
    writer->cinfo.dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
    jpeg_set_colorspace(&writer->cinfo, gray ? JCS_GRAYSCALE : JCS_YCbCr);
    if (progressive) jpeg_simple_progression(&writer->cinfo);
    writer->cinfo.comp_info[0].h_samp_factor = gray ? 1 : 2;
    writer->cinfo.comp_info[0].v_samp_factor = gray ? 1 : 2;
    if (!gray) {
        for (int c = 1; c < 3; c++) {
            writer->cinfo.comp_info[c].h_samp_factor = 1;
            writer->cinfo.comp_info[c].v_samp_factor = 1;
        }
    }
    jpeg_start_compress(&writer->cinfo, TRUE);
    JSAMPROW rows[16];
    while (writer->cinfo.next_scanline < writer->cinfo.image_height) {
        int count = 0;
        while (count < 16 && writer->cinfo.next_scanline + (JDIMENSION)count < writer->cinfo.image_height) {
            rows[count] = (JSAMPROW)(pixels + (size_t)(writer->cinfo.next_scanline + (JDIMENSION)count) * stride);
            count++;
        }
        jpeg_write_scanlines(&writer->cinfo, rows, (JDIMENSION)count);
    }
    jpeg_finish_compress(&writer->cinfo);
    jpeg_destroy_compress(&writer->cinfo);
    *out = writer->buffer;
    *out_size = (unsigned long)(writer->capacity - writer->destination.free_in_buffer);
    free(writer);
    return WI_JPEG_ROWS_OK;
}
