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
            var found: ImageRepairs = []
            // A cancelled decode stops the walk (millions of empty chunks), then throws `.cancelled`.
            let finished = PNGChunks.walkHeaders(raw) { type, start, body in
                guard type != PNGChunks.Types.iend, raw[start + 4] & 0x20 != 0 else { return true }  // ancillary only
                let crc = crc32(UnsafeRawBufferPointer(rebasing: raw[(start + 4)..<body.upperBound]).bindMemory(to: UInt8.self))
                guard crc == PNGChunks.readUInt32(raw, body.upperBound) else {
                    found = .damagedMetadata
                    return false
                }
                return true
            }
            return finished ? found : []
        }
    }

    /// The file without its chunks of `type` (before `IDAT`), or `nil` when it has none.
    static func removing(_ type: String, from data: Data) -> Data? {
        let name = Array(type.utf8)
        var kept = Data(), removed = false
        data.withUnsafeBytes { raw in
            var copiedUpTo = 0
            PNGChunks.walkHeaders(raw) { type, start, body in
                if type == PNGChunks.Types.idat { return false }
                if raw[(start + 4)..<(start + 8)].elementsEqual(name) {
                    kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[copiedUpTo..<start]))
                    copiedUpTo = body.upperBound + 4
                    removed = true
                }
                return true
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
