#include <spng.h>
#include <zlib.h>  // crc32_z: PNG chunk CRCs (CRC32 in the APNG coder)
