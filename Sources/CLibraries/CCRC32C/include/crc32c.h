#ifndef WEBIMAGE_CRC32C_H
#define WEBIMAGE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli) of `length` bytes, continuing from `crc` (0 to start). Uses Intel's
/// ISA-L (`libisal.so.2`, opened on first use) when it is installed and not switched off with
/// `WEBIMAGE_DISABLE_ISAL=1`, else `webimage_crc32c_builtin`.
uint32_t webimage_crc32c(uint32_t crc, const void *bytes, size_t length);

/// The same CRC without ISA-L: the CPU's crc32 instruction where there is one (x86-64 SSE 4.2),
/// three lanes at once, a table otherwise.
uint32_t webimage_crc32c_builtin(uint32_t crc, const void *bytes, size_t length);

/// Whether `webimage_crc32c` uses ISA-L (loads it on the first call).
int webimage_crc32c_uses_isal(void);

#endif
