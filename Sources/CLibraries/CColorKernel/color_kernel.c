// The vectorised matrix-and-curve conversion (see color_kernel.h). The AVX-512 kernel takes 64
// pixels at a time, without gathers (slow on AMD's Zen):
//  1. four loads of 16 pixels are split into R, G and B planes of 64 bytes (byte permutes);
//  2. each plane's input curve is looked up with byte permutes over the 256-entry tables held in
//     four registers (vpermi2b reads 128 entries; the level's top bit picks which half), once
//     for the low and once for the high byte of the 16-bit linear value;
//  3. both bytes are joined into 32-bit integers, 16 pixels a register, and made floats;
//  4. the matrix is nine multiply-adds per 16 pixels;
//  5. the sRGB encode: below 0.0031308 the straight segment (× 12.92), above it a degree-4
//     polynomial in v^(1/4) (two reciprocal-square-root approximations, 14 bits each), fitted
//     to 255 × (1.055 v^(1/2.4) − 0.055) within 0.009 of a level, rounded to the nearest level;
//  6. the three levels and the original alpha are put back together in place.
// A row's last (count mod 64) pixels go through the same code in a 64-pixel stack buffer, so
// every pixel gets the same arithmetic. The AVX2 kernel (further down) does the same 8 pixels at
// a time with gathers for the curves; each is compiled with a target attribute and chosen at run
// time, so the rest of the package needs no special compiler flags.
#include "color_kernel.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>

#define KERNEL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512dq,fma")))

// 255 × (1.055 v^(1/2.4) − 0.055) ≈ c0 + c1 t + c2 t² + c3 t³ + c4 t⁴, t = v^(1/4), for v in
// [0.0031308, 1]: a weighted least-squares fit, largest error 0.0088 of a level.
static const float encode_c0 = -16.47668394157215f, encode_c1 = 50.01948713621286f,
    encode_c2 = 286.27327081062333f, encode_c3 = -85.54383567594195f, encode_c4 = 20.736598824187514f;
static const float linear_end = 0.0031308f, linear_slope = 12.92f * 255.0f;

KERNEL_TARGET
static inline __m512i encode16(__m512 v) {
    // Not clipped here: the caller's saturating packs do it. v < 0 gives t = NaN and v = 0 gives
    // t = 0 (rsqrt14(0) = +inf, rsqrt14(+inf) = 0), but both take the straight segment; v > 1
    // gives more than 255 (the polynomial rises for all t up to 4, and |v| < 192).
    __m512 t = _mm512_rsqrt14_ps(_mm512_rsqrt14_ps(v));
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(encode_c4), t, _mm512_set1_ps(encode_c3));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(encode_c2));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(encode_c1));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(encode_c0));
    __mmask16 straight = _mm512_cmp_ps_mask(v, _mm512_set1_ps(linear_end), _CMP_LT_OQ);
    p = _mm512_mask_mul_ps(p, straight, v, _mm512_set1_ps(linear_slope));
    return _mm512_cvtps_epi32(p);  // round to nearest
}

// Byte indices (vpermi2b: bit 6 picks the second register).
static uint8_t rg_index[64] __attribute__((aligned(64)));     // R of 32 pixels, then their G
static uint8_t b_low_index[64] __attribute__((aligned(64)));  // B of 32 pixels in the low half
static uint8_t b_high_index[64] __attribute__((aligned(64))); // ... in the high half
static uint8_t word_index[4][64] __attribute__((aligned(64))); // low, high, low, high: 16 pixels

static uint8_t transpose[64] __attribute__((aligned(64)));      // RRRRGGGGBBBBAAAA → RGBA × 4 (per 16 bytes)

static void build_indices(void) {
    for (int lane = 0; lane < 4; lane++) {
        for (int i = 0; i < 4; i++) {
            for (int c = 0; c < 4; c++) transpose[16 * lane + 4 * i + c] = (uint8_t)(4 * c + i);
        }
    }
    for (int j = 0; j < 32; j++) {
        rg_index[j] = (uint8_t)(4 * j);
        rg_index[32 + j] = (uint8_t)(4 * j + 1);
        b_low_index[j] = (uint8_t)(4 * j + 2);
        b_low_index[32 + j] = 0;
        b_high_index[j] = 0;
        b_high_index[32 + j] = (uint8_t)(4 * j + 2);
    }
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 16; i++) {
            word_index[k][4 * i] = (uint8_t)(16 * k + i);
            word_index[k][4 * i + 1] = (uint8_t)(64 + 16 * k + i);
            word_index[k][4 * i + 2] = (uint8_t)(16 * k + i);
            word_index[k][4 * i + 3] = (uint8_t)(64 + 16 * k + i);
        }
    }
}

KERNEL_TARGET
static inline __m512i lookup(const uint8_t *table, __m512i plane, __mmask64 top) {
    __m512i first = _mm512_permutex2var_epi8(_mm512_loadu_si512(table), plane, _mm512_loadu_si512(table + 64));
    __m512i second = _mm512_permutex2var_epi8(_mm512_loadu_si512(table + 128), plane, _mm512_loadu_si512(table + 192));
    return _mm512_mask_blend_epi8(top, first, second);
}

KERNEL_TARGET
__attribute__((always_inline)) static inline void convert64(const webimage_color_tables *tables, uint8_t *p) {
    __m512i in[4];
    for (int k = 0; k < 4; k++) in[k] = _mm512_loadu_si512(p + 64 * k);
    const __m512i rg = _mm512_load_si512(rg_index);
    __m512i rg_ab = _mm512_permutex2var_epi8(in[0], rg, in[1]), rg_cd = _mm512_permutex2var_epi8(in[2], rg, in[3]);
    __m512i plane[3];
    plane[0] = _mm512_shuffle_i64x2(rg_ab, rg_cd, _MM_SHUFFLE(1, 0, 1, 0));
    plane[1] = _mm512_shuffle_i64x2(rg_ab, rg_cd, _MM_SHUFFLE(3, 2, 3, 2));
    plane[2] = _mm512_mask_blend_epi8(0xFFFFFFFF00000000ull,
        _mm512_permutex2var_epi8(in[0], _mm512_load_si512(b_low_index), in[1]),
        _mm512_permutex2var_epi8(in[2], _mm512_load_si512(b_high_index), in[3]));
    __m512i low[3], high[3];
    for (int c = 0; c < 3; c++) {
        __mmask64 top = _mm512_movepi8_mask(plane[c]);
        low[c] = lookup(tables->low[c], plane[c], top);
        high[c] = lookup(tables->high[c], plane[c], top);
    }
    const float *m = tables->matrix;
#pragma clang loop unroll(full)
    for (int k = 0; k < 4; k++) {
        const __m512i spread = _mm512_load_si512(word_index[k]);
        __m512 linear[3];
        for (int c = 0; c < 3; c++) {
            // The 16-bit value w twice: w × 65537 as an unsigned 32-bit integer (no masking
            // needed), exact to 24 bits as a float; the matrix divides by 65535 × 65537.
            linear[c] = _mm512_cvtepu32_ps(_mm512_permutex2var_epi8(low[c], spread, high[c]));
        }
        __m512i level[3];
        for (int o = 0; o < 3; o++) {
            __m512 v = _mm512_mul_ps(_mm512_set1_ps(m[3 * o]), linear[0]);
            v = _mm512_fmadd_ps(_mm512_set1_ps(m[3 * o + 1]), linear[1], v);
            v = _mm512_fmadd_ps(_mm512_set1_ps(m[3 * o + 2]), linear[2], v);
            level[o] = encode16(v);
        }
        // Saturating packs clip to [0, 255]; per 128-bit lane they give R, G, B and A of 4 pixels
        // (4 bytes each), which the in-lane byte shuffle puts back in pixel order.
        __m512i rg = _mm512_packus_epi32(level[0], level[1]);
        __m512i ba = _mm512_packus_epi32(level[2], _mm512_srli_epi32(in[k], 24));
        __m512i planar = _mm512_packus_epi16(rg, ba);
        _mm512_storeu_si512(p + 64 * k, _mm512_shuffle_epi8(planar, _mm512_load_si512(transpose)));
    }
}

KERNEL_TARGET
static void convert_avx512(const webimage_color_tables *tables, uint8_t *pixels, size_t blocks) {
    for (size_t i = 0; i < blocks; i++) convert64(tables, pixels + 256 * i);
}

KERNEL_TARGET
static void encode_avx512(const float *linear, uint8_t *levels, size_t count) {
    size_t i = 0;
    for (; i < count; i += 16) {
        __mmask16 part = count - i >= 16 ? 0xFFFF : (__mmask16)((1u << (count - i)) - 1);
        __m512i level = _mm512_max_epi32(encode16(_mm512_maskz_loadu_ps(part, linear + i)), _mm512_setzero_si512());
        _mm512_mask_cvtusepi32_storeu_epi8(levels + i, part, level);  // as the packs clip
    }
}

// The AVX2 kernel, for CPUs without AVX-512 VBMI (Intel before Ice Lake, including the
// AVX-512 Skylake servers; AMD before Zen 4): 8 pixels at a time, the input curves gathered from
// `wide` (no byte permutes in AVX2), the same matrix and polynomial; `rsqrt` has 12 bits, so
// v^(1/4) takes one Newton step.
#define KERNEL2_TARGET __attribute__((target("avx2,fma")))

KERNEL2_TARGET
static inline __m256i encode8(__m256 v) {
    // As encode16: v < 0 gives NaN and v = 0 gives NaN too (inf × 0 in the Newton step), both
    // on the straight segment; the caller's packs clip.
    __m256 s = _mm256_rsqrt_ps(v);
    __m256 y = _mm256_rsqrt_ps(s);
    __m256 t = _mm256_mul_ps(y, _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_mul_ps(s, _mm256_set1_ps(0.5f)), y), y, _mm256_set1_ps(1.5f)));
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(encode_c4), t, _mm256_set1_ps(encode_c3));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(encode_c2));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(encode_c1));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(encode_c0));
    __m256 straight = _mm256_cmp_ps(v, _mm256_set1_ps(linear_end), _CMP_LT_OQ);
    p = _mm256_blendv_ps(p, _mm256_mul_ps(v, _mm256_set1_ps(linear_slope)), straight);
    return _mm256_cvtps_epi32(p);
}

KERNEL2_TARGET
__attribute__((always_inline)) static inline void convert8(const webimage_color_tables *tables, uint8_t *p) {
    const __m256i in = _mm256_loadu_si256((const __m256i *)p), byte = _mm256_set1_epi32(0xFF);
    __m256 linear[3];
    for (int c = 0; c < 3; c++) {
        __m256i level = _mm256_and_si256(_mm256_srli_epi32(in, 8 * c), byte);
        linear[c] = _mm256_i32gather_ps(tables->wide[c], level, 4);
    }
    const float *m = tables->matrix;
    __m256i level[3];
    for (int o = 0; o < 3; o++) {
        __m256 v = _mm256_mul_ps(_mm256_set1_ps(m[3 * o]), linear[0]);
        v = _mm256_fmadd_ps(_mm256_set1_ps(m[3 * o + 1]), linear[1], v);
        v = _mm256_fmadd_ps(_mm256_set1_ps(m[3 * o + 2]), linear[2], v);
        level[o] = encode8(v);
    }
    __m256i rg = _mm256_packus_epi32(level[0], level[1]);
    __m256i ba = _mm256_packus_epi32(level[2], _mm256_srli_epi32(in, 24));
    __m256i planar = _mm256_packus_epi16(rg, ba);
    _mm256_storeu_si256((__m256i *)p, _mm256_shuffle_epi8(planar, _mm256_load_si256((const __m256i *)transpose)));
}

KERNEL2_TARGET
static void convert_avx2(const webimage_color_tables *tables, uint8_t *pixels, size_t blocks) {
    for (size_t i = 0; i < blocks; i++) convert8(tables, pixels + 32 * i);
}

// `count` pixels in whole blocks of `block` pixels (at most 64), the last partial block in a
// stack buffer, so that every pixel gets the same arithmetic and nothing past the row is touched.
static void in_blocks(const webimage_color_tables *tables, uint8_t *pixels, size_t count, size_t block,
                      void (*run)(const webimage_color_tables *, uint8_t *, size_t)) {
    size_t whole = count / block, rest = count % block;
    run(tables, pixels, whole);
    if (rest) {
        uint8_t buffer[256] __attribute__((aligned(64)));
        memset(buffer, 0, sizeof buffer);
        memcpy(buffer, pixels + 4 * block * whole, 4 * rest);
        run(tables, buffer, 1);
        memcpy(pixels + 4 * block * whole, buffer, 4 * rest);
    }
}

KERNEL2_TARGET
static void encode_avx2(const float *linear, uint8_t *levels, size_t count) {
    for (size_t i = 0; i < count; i += 8) {
        float in[8] = {0};
        int32_t out[8];
        size_t n = count - i < 8 ? count - i : 8;
        memcpy(in, linear + i, 4 * n);
        __m256i level = _mm256_max_epi32(encode8(_mm256_loadu_ps(in)), _mm256_setzero_si256());
        _mm256_storeu_si256((__m256i *)out, _mm256_min_epi32(level, _mm256_set1_epi32(255)));
        for (size_t k = 0; k < n; k++) levels[i + k] = (uint8_t)out[k];
    }
}

// The CPU's answer from cpuid, and the operating system's from xgetbv: it must save the 256-bit
// registers (XCR0 bits 1 and 2) for AVX2, and the opmask and all 512-bit registers too (bits 5,
// 6 and 7) for AVX-512, or the instructions fault.
static int check(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return WEBIMAGE_COLOR_KERNEL_NONE;
    int osxsave = (c >> 27) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !fma) return WEBIMAGE_COLOR_KERNEL_NONE;
    unsigned low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    if ((low & 0x6) != 0x6 || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return WEBIMAGE_COLOR_KERNEL_NONE;
    int avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512bw = (b >> 30) & 1, vbmi = (c >> 1) & 1;
    if ((low & 0xE6) == 0xE6 && avx512f && avx512dq && avx512bw && vbmi) return WEBIMAGE_COLOR_KERNEL_AVX512;
    return avx2 ? WEBIMAGE_COLOR_KERNEL_AVX2 : WEBIMAGE_COLOR_KERNEL_NONE;
}

static int available;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void decide(void) {
    build_indices();
    available = check();
}

int webimage_color_kernel_available(void) {
    pthread_once(&once, decide);
    return available;
}

void webimage_color_prepare(webimage_color_tables *tables) {
    for (int c = 0; c < 3; c++) {
        for (int level = 0; level < 256; level++) {
            uint32_t w = (uint32_t)tables->low[c][level] | (uint32_t)tables->high[c][level] << 8;
            tables->wide[c][level] = (float)(w * 65537u);
        }
    }
}

static int chosen(int kernel) {
    int best = webimage_color_kernel_available();
    return kernel < best ? kernel : best;
}

void webimage_color_convert(const webimage_color_tables *tables, int kernel, uint8_t *pixels, size_t count) {
    switch (chosen(kernel)) {
    case WEBIMAGE_COLOR_KERNEL_AVX512: in_blocks(tables, pixels, count, 64, convert_avx512); break;
    case WEBIMAGE_COLOR_KERNEL_AVX2: in_blocks(tables, pixels, count, 8, convert_avx2); break;
    default: break;
    }
}

void webimage_color_encode(int kernel, const float *linear, uint8_t *levels, size_t count) {
    switch (chosen(kernel)) {
    case WEBIMAGE_COLOR_KERNEL_AVX512: encode_avx512(linear, levels, count); break;
    case WEBIMAGE_COLOR_KERNEL_AVX2: encode_avx2(linear, levels, count); break;
    default: break;
    }
}

#else
int webimage_color_kernel_available(void) { return WEBIMAGE_COLOR_KERNEL_NONE; }
void webimage_color_prepare(webimage_color_tables *tables) { (void)tables; }
void webimage_color_convert(const webimage_color_tables *tables, int kernel, uint8_t *pixels, size_t count) {
    (void)tables; (void)kernel; (void)pixels; (void)count;
}
void webimage_color_encode(int kernel, const float *linear, uint8_t *levels, size_t count) {
    (void)kernel; (void)linear; (void)levels; (void)count;
}
#endif
