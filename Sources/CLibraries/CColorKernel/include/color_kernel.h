// The vectorised matrix-and-curve conversion to sRGB (issue 28; docs/architecture/colour.md):
// RGBA8 pixels in place, alpha untouched. The caller (MatrixShaperConversion) builds the
// tables once per profile pair and keeps the scalar kernel for CPUs without AVX2.
#ifndef WEBIMAGE_COLOR_KERNEL_H
#define WEBIMAGE_COLOR_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/// The kernels, best last: what `webimage_color_kernel_available` answers and what the
/// conversion calls take (a kernel the CPU lacks is replaced by the best it has).
enum {
    WEBIMAGE_COLOR_KERNEL_NONE = 0,
    WEBIMAGE_COLOR_KERNEL_AVX2 = 1,    // AVX2 and FMA: 8 pixels at a time, gathers
    WEBIMAGE_COLOR_KERNEL_AVX512 = 2,  // AVX-512 F, BW, DQ and VBMI: 64 pixels, byte permutes
};

/// Tables for one source profile: each channel's input curve as 16-bit linear values w
/// (round(linear × 65535)), split into low and high bytes for byte permutes, and the 3 × 3
/// matrix from w × 65537 (the kernels' form of w) to linear sRGB in [0, 1], row-major (output
/// row, input column), i.e. the colorant matrix divided by 65535 × 65537 = 2^32 − 1. `wide` is
/// w × 65537 as floats, filled by `webimage_color_prepare` from `low` and `high`.
typedef struct {
    uint8_t low[3][256];
    uint8_t high[3][256];
    float matrix[9];
    float wide[3][256];
} webimage_color_tables;

/// The best kernel this CPU and operating system run (x86-64 only; the OS must save the
/// registers the kernel uses).
int webimage_color_kernel_available(void);

/// Fills `tables->wide` from `low` and `high`: call once after filling them.
void webimage_color_prepare(webimage_color_tables *tables);

/// Converts `count` RGBA8 pixels at `pixels` (any alignment) in place to sRGB's curve with
/// `kernel` (or the best available below it): the input curves, the matrix, values clipped to
/// [0, 1], then the sRGB encode as a polynomial within 0.01 of a level of the exact curve.
/// Does nothing when no kernel is available.
void webimage_color_convert(const webimage_color_tables *tables, int kernel, uint8_t *pixels, size_t count);

/// The sRGB encode `kernel` uses, for `count` linear values in `linear` (clipped to [0, 1])
/// into 8-bit levels: the tests compare it with the exact curve. Does nothing when no kernel is
/// available.
void webimage_color_encode(int kernel, const float *linear, uint8_t *levels, size_t count);

#endif
