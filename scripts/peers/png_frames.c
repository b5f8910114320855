/* Decodes PNG files with libpng's simplified API to RGBA8, RUNS times; prints the median total
 * seconds for all files together (scripts/peers/peer-decoders.py: the frames of an APNG as separate
 * PNG streams, the floor a libpng-based APNG decoder cannot go under). CPU time of the thread.
 *   png_frames RUNS FILE... */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) return 1;
    int runs = atoi(argv[1]) > 0 ? atoi(argv[1]) : 10;
    size_t files = (size_t)argc - 2;
    unsigned char **data = calloc(files, sizeof *data);
    size_t *sizes = calloc(files, sizeof *sizes);
    for (size_t f = 0; f < files; f++) {
        FILE *fp = fopen(argv[f + 2], "rb");
        if (!fp) return 1;
        fseek(fp, 0, SEEK_END);
        sizes[f] = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        data[f] = malloc(sizes[f]);
        if (fread(data[f], 1, sizes[f], fp) != sizes[f]) return 1;
        fclose(fp);
    }
    double *times = calloc(runs, sizeof *times);
    for (int r = 0; r < runs; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        for (size_t f = 0; f < files; f++) {
            png_image image = {0};
            image.version = PNG_IMAGE_VERSION;
            if (!png_image_begin_read_from_memory(&image, data[f], sizes[f])) return 2;
            image.format = PNG_FORMAT_RGBA;
            void *pixels = malloc(PNG_IMAGE_SIZE(image));
            if (!png_image_finish_read(&image, NULL, pixels, 0, NULL)) return 3;
            free(pixels);
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        times[r] = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    }
    qsort(times, runs, sizeof *times, cmp);
    printf("%.9f\n", times[runs / 2]);
    return 0;
}
