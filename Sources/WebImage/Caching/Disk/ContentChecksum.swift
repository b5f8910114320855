import Foundation
internal import Crypto

/// The checksum kept in the index for every entry's bytes: the first 8 bytes of their SHA-256.
///
/// Chosen by measurement (docs/ARCHITECTURE.md, "Caching"): on this project's machines
/// SHA-256 runs on the CPU's SHA extensions through swift-crypto (≈ 1.7 GB/s), faster than
/// zlib's table CRC-32 (≈ 0.6 GB/s) and a table CRC-32C in Swift (≈ 0.35 GB/s, `-O`), and
/// 64 bits make an undetected random corruption a 2⁻⁶⁴ event.
enum ContentChecksum {
    static func of(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        let digest = SHA256.hash(data: bytes)
        return digest.withUnsafeBytes { Int64(bitPattern: $0.loadUnaligned(as: UInt64.self).bigEndian) }
    }
}
