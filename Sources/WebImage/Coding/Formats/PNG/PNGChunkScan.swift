public import Foundation

/// A walk over a PNG's chunks checking the CRC of every ancillary chunk (`tEXt`, `eXIf`,
/// `iCCP`, …), which libspng is told to discard in lenient mode: browsers ignore such chunks,
/// strict mode refuses the file. Critical chunks (`IHDR`, `PLTE`, `IDAT`, `IEND`) are always
/// checked by libspng itself.
///
/// ```swift
/// let found = PNGChunkScan.repairs(in: data)   // [.damagedMetadata] for a bad tEXt CRC
/// ```
public enum PNGChunkScan {
    public static func repairs(in data: Data) -> ImageRepairs {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var offset = 8
            var chunks = 0
            while offset + 12 <= bytes.count {
                // A cancelled decode stops here (millions of empty chunks), then throws `.cancelled`.
                chunks += 1
                if chunks & 0xFFF == 0, Task.isCancelled { return [] }
                let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard length <= bytes.count - offset - 12 else { return [] }  // cut: libspng's concern
                if PNGChunks.readUInt32(raw, offset + 4) == PNGChunks.Types.iend { return [] }
                if bytes[offset + 4] & 0x20 != 0 {  // ancillary
                    let stored = bytes[(offset + 8 + length)..<(offset + 12 + length)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    if crc32(UnsafeBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 8 + length)])) != stored {
                        return .damagedMetadata
                    }
                }
                offset += 12 + length
            }
            return []
        }
    }

    /// The file without its chunks of `type` (before `IDAT`), or `nil` when it has none.
    static func removing(_ type: String, from data: Data) -> Data? {
        let name = Array(type.utf8)
        var kept = Data(), removed = false
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var offset = 8, copiedUpTo = 0
            while offset + 12 <= bytes.count {
                let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard length <= bytes.count - offset - 12 else { break }
                let chunk = UnsafeBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 8)])
                if PNGChunks.readUInt32(raw, offset + 4) == PNGChunks.Types.idat { break }
                if chunk.elementsEqual(name) {
                    kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[copiedUpTo..<offset]))
                    copiedUpTo = offset + 12 + length
                    removed = true
                }
                offset += 12 + length
            }
            kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[copiedUpTo...]))
        }
        return removed ? kept : nil
    }

    /// CRC-32 (ISO 3309, the PNG and zlib polynomial).
    static func crc32(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    private static let table: [UInt32] = (0..<256).map { (n: UInt32) in
        (0..<8).reduce(n) { c, _ in c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
}
