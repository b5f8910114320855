/* Decodes the same PNG with libspng and with libpng's simplified API, N times each, to RGBA8,
 * and prints megapixels per second: the measurement behind WebImage's choice of PNG library. */
#include <png.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* A noisy RGBA image (worst case for deflate, like a photo), encoded with libpng. */
static unsigned char *make_png(int w, int h, size_t *size) {
    unsigned char *pixels = malloc((size_t)w * h * 4);
    unsigned int seed = 12345;
    for (size_t i = 0; i < (size_t)w * h * 4; i++) {
        seed = seed * 1103515245u + 12345u;
        pixels[i] = (unsigned char)((i % 4 == 3) ? 255 : ((i / 4 % w) + (seed >> 28)));
    }
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = w;
    image.height = h;
    image.format = PNG_FORMAT_RGBA;
    png_alloc_size_t length = 0;
    png_image_write_to_memory(&image, NULL, &length, 0, pixels, 0, NULL);
    unsigned char *out = malloc(length);
    png_image_write_to_memory(&image, out, &length, 0, pixels, 0, NULL);
    free(pixels);
    *size = length;
    return out;
}

int main(int argc, char **argv) {
    int w = 1000, h = 1000, rounds = argc > 1 ? atoi(argv[1]) : 20;
    size_t size;
    unsigned char *png = make_png(w, h, &size);
    unsigned char *out = malloc((size_t)w * h * 4);

    double start = now();
    for (int r = 0; r < rounds; r++) {
        spng_ctx *ctx = spng_ctx_new(0);
        spng_set_png_buffer(ctx, png, size);
        if (spng_decode_image(ctx, out, (size_t)w * h * 4, SPNG_FMT_RGBA8, SPNG_DECODE_TRNS) != 0) return 1;
        spng_ctx_free(ctx);
    }
    double spng = (now() - start) / rounds;

    start = now();
    for (int r = 0; r < rounds; r++) {
        png_image image;
        memset(&image, 0, sizeof image);
        image.version = PNG_IMAGE_VERSION;
        if (!png_image_begin_read_from_memory(&image, png, size)) return 1;
        image.format = PNG_FORMAT_RGBA;
        if (!png_image_finish_read(&image, NULL, out, 0, NULL)) return 1;
    }
    double libpng = (now() - start) / rounds;

    printf("1000x1000 noisy RGBA PNG (%zu bytes), %d rounds each\n", size, rounds);
    printf("libspng 0.7:            %6.2f ms  %6.1f MP/s\n", spng * 1e3, 1.0 / spng);
    printf("libpng 1.6 (simplified): %6.2f ms  %6.1f MP/s\n", libpng * 1e3, 1.0 / libpng);
    printf("libspng / libpng speed: %.2fx\n", libpng / spng);
    return 0;
}
