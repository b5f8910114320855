// CRC-32C for the disk cache's checksums (docs/architecture/caching.md): the x86-64 crc32
// instruction when the CPU has SSE 4.2 (three lanes of it at once: about 8 bytes per cycle),
// else a byte-wise table; Intel's ISA-L instead when it is installed (see webimage_crc32c).
#include "crc32c.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define POLYNOMIAL 0x82F63B78u  // CRC-32C, reflected

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLYNOMIAL : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc32c_table(uint32_t crc, const uint8_t *p, size_t n) {
    pthread_once(&table_once, build_table);
    while (n--) crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>

__attribute__((target("sse4.2")))
static uint64_t crc32c_words(uint64_t c, const uint8_t *p, size_t n) {
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        n -= 8;
    }
    return c;
}

// Three lanes at once: the crc32 instruction takes 3 cycles but can start every cycle, so one
// dependent chain uses a third of it. A block is three lanes of LANE bytes, each lane's register
// updated in its own chain; the lanes are then joined by linearity: feeding a lane from state s
// gives (the lane fed from 0) XOR (s moved across LANE zero bytes), and moving across LANE zero
// bytes is a fixed linear map of 32 bits, tabulated once per byte position (4 × 256 entries).
#define LANE 2048

static uint32_t across_lane[4][256];
static pthread_once_t across_lane_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2")))
static uint32_t move_across_zeros(uint32_t state) {
    uint64_t c = state;
    for (int i = 0; i < LANE / 8; i++) c = _mm_crc32_u64(c, 0);
    return (uint32_t)c;
}

static void build_across_lane(void) {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++) basis[bit] = move_across_zeros(1u << bit);
    for (int k = 0; k < 4; k++) {
        for (uint32_t byte = 0; byte < 256; byte++) {
            uint32_t image = 0;
            for (int bit = 0; bit < 8; bit++) {
                if (byte & (1u << bit)) image ^= basis[8 * k + bit];
            }
            across_lane[k][byte] = image;
        }
    }
}

static inline uint32_t across(uint32_t state) {
    return across_lane[0][state & 0xFF] ^ across_lane[1][(state >> 8) & 0xFF]
        ^ across_lane[2][(state >> 16) & 0xFF] ^ across_lane[3][state >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = crc;
    if (n >= 3 * LANE) {
        pthread_once(&across_lane_once, build_across_lane);
        while (n >= 3 * LANE) {
            uint64_t a = c, b = 0, d = 0;
            for (size_t i = 0; i < LANE; i += 8) {
                uint64_t wa, wb, wd;
                memcpy(&wa, p + i, 8);
                memcpy(&wb, p + LANE + i, 8);
                memcpy(&wd, p + 2 * LANE + i, 8);
                a = _mm_crc32_u64(a, wa);
                b = _mm_crc32_u64(b, wb);
                d = _mm_crc32_u64(d, wd);
            }
            c = across(across((uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)d;
            p += 3 * LANE;
            n -= 3 * LANE;
        }
    }
    c = crc32c_words(c, p, n);
    p += n & ~(size_t)7;
    n &= 7;
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}

static int has_sse42(void) {
    static int cached = -1;  // a benign race: every thread computes the same answer
    if (cached < 0) {
        unsigned a, b, c, d;
        cached = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 0;
    }
    return cached;
}
#endif

uint32_t webimage_crc32c_builtin(uint32_t crc, const void *bytes, size_t length) {
    const uint8_t *p = bytes;
    crc = ~crc;
#if defined(__x86_64__)
    if (has_sse42()) return ~crc32c_sse42(crc, p, length);
#endif
    return ~crc32c_table(crc, p, length);
}

// Intel's ISA-L (Debian's libisal2), when installed: its CRC-32C folds with carry-less multiplies
// (AVX-512 where the CPU has it), 2.2× the three-lane loop above on 50 KB here. Opened on first
// use like the codecs (docs/architecture/startup.md), so a process that never checks a
// checksum never loads it; without it the builtin code runs.
typedef unsigned int (*isal_crc32_iscsi)(unsigned char *, int, unsigned int);
static isal_crc32_iscsi isal_crc;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

static void load_isal(void) {
    const char *disabled = getenv("WEBIMAGE_DISABLE_ISAL");
    if (disabled && *disabled && strcmp(disabled, "0") != 0) return;
    void *library = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (library) isal_crc = (isal_crc32_iscsi)dlsym(library, "crc32_iscsi");
}

int webimage_crc32c_uses_isal(void) {
    pthread_once(&isal_once, load_isal);
    return isal_crc != NULL;
}

// ISA-L's `crc32_iscsi` takes and returns the register (no inversions) and an `int` length.
#define SMALL 1024  // below this a library call costs more than it saves

uint32_t webimage_crc32c(uint32_t crc, const void *bytes, size_t length) {
    if (length < SMALL || !webimage_crc32c_uses_isal()) return webimage_crc32c_builtin(crc, bytes, length);
    const uint8_t *p = bytes;
    uint32_t state = ~crc;
    while (length > 0) {
        int part = length > (1u << 30) ? (1 << 30) : (int)length;
        state = isal_crc((unsigned char *)p, part, state);
        p += part;
        length -= (size_t)part;
    }
    return ~state;
}
