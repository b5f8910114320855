import CCRC32C

/// The checksum kept in the index for every entry's bytes: their CRC-32C.
///
/// Chosen by measurement (docs/architecture/caching.md; 1 MiB buffers on this project's
/// machines): CRC-32C through the CPU's `crc32` instruction 8.4 GB/s, against 3.6 GB/s for zlib's
/// CRC-32, 1.8 GB/s for SHA-256 on the CPU's SHA extensions (swift-crypto / OpenSSL) and 1.7 GB/s
/// for a table CRC-32C in Swift. It is checked on every hit, so it must cost far less than reading
/// the file; a CRC detects every burst of up to 32 flipped bits and misses a random corruption
/// with probability 2⁻³² (this guards against damage, not against an attacker who can write the
/// cache directory).
enum ContentChecksum {
    static func of(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        Int64(webimage_crc32c(0, bytes.baseAddress, bytes.count))
    }
}
