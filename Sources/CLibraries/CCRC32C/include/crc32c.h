#ifndef WEBIMAGE_CRC32C_H
#define WEBIMAGE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli) of `length` bytes, continuing from `crc` (0 to start). Uses the CPU's
/// crc32 instruction where there is one (x86-64 SSE 4.2), a table otherwise.
uint32_t webimage_crc32c(uint32_t crc, const void *bytes, size_t length);

#endif
