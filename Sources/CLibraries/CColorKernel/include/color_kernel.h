// The vectorised matrix-and-curve conversion to sRGB (issue 28; docs/architecture/colour.md):
// RGBA8 pixels in place, alpha untouched. The caller (MatrixShaperConversion) builds the
// tables once per profile pair and keeps the scalar kernel for CPUs without AVX-512 VBMI.
#ifndef WEBIMAGE_COLOR_KERNEL_H
#define WEBIMAGE_COLOR_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/// Tables for one source profile: each channel's input curve as 16-bit linear values w
/// (round(linear × 65535)), split into low and high bytes for byte permutes, and the 3 × 3
/// matrix from w × 65537 (the kernel's form of w) to linear sRGB in [0, 1], row-major (output
/// row, input column), i.e. the colorant matrix divided by 65535 × 65537 = 2^32 − 1.
typedef struct {
    uint8_t low[3][256];
    uint8_t high[3][256];
    float matrix[9];
} webimage_color_tables;

/// Non-zero when this CPU runs the vectorised kernel (x86-64 with AVX-512 BW and VBMI, and an
/// operating system that saves the 512-bit registers).
int webimage_color_kernel_available(void);

/// Converts `count` RGBA8 pixels at `pixels` (any alignment) in place to sRGB's curve: the
/// input curves, the matrix, values clipped to [0, 1], then the sRGB encode as a polynomial
/// within 0.01 of a level of the exact curve. Does nothing unless the kernel is available.
void webimage_color_convert(const webimage_color_tables *tables, uint8_t *pixels, size_t count);

/// The sRGB encode the kernel uses, for `count` linear values in `linear` (clipped to [0, 1])
/// into 8-bit levels: the tests compare it with the exact curve. Does nothing unless the kernel
/// is available.
void webimage_color_encode(const float *linear, uint8_t *levels, size_t count);

#endif
