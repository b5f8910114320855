import Foundation

/// A PNG writer independent of libspng, for fixtures: any colour type at 8 or 16 bits, optional
/// palette and `tRNS`, optional Adam7 interlacing, image data in stored (uncompressed) deflate
/// blocks. What a test puts in is the reference the decoder must reproduce.
struct RawPNG {
    var width: Int
    var height: Int
    var bitDepth: UInt8 = 8
    /// 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA.
    var colorType: UInt8
    var interlaced = false
    var palette: [UInt8]? = nil
    var transparency: [UInt8]? = nil
    /// The bytes of pixel (x, y) in the PNG's sample layout (big-endian for 16 bits).
    var sample: (Int, Int) -> [UInt8]

    func encode() -> Data {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr = UInt32(width).bigEndianBytes + UInt32(height).bigEndianBytes
        ihdr += [bitDepth, colorType, 0, 0, interlaced ? 1 : 0]
        png += chunk("IHDR", ihdr)
        if let palette { png += chunk("PLTE", palette) }
        if let transparency { png += chunk("tRNS", transparency) }
        // Several small IDAT chunks, as real encoders write (libpng: 8 KB), so partial data has
        // complete chunks a progressive decoder can use.
        let compressed = zlibStored(scanlines())
        for start in stride(from: 0, to: compressed.count, by: 256) {
            png += chunk("IDAT", Array(compressed[start..<min(start + 256, compressed.count)]))
        }
        png += chunk("IEND", [])
        return png
    }

    /// Filter type 0 scanlines, pass by pass when interlaced.
    private func scanlines() -> [UInt8] {
        let passes: [(x: Int, y: Int, dx: Int, dy: Int)] = interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        var out: [UInt8] = []
        for pass in passes {
            let xs = Array(stride(from: pass.x, to: width, by: pass.dx)), ys = Array(stride(from: pass.y, to: height, by: pass.dy))
            guard !xs.isEmpty else { continue }
            for y in ys {
                out.append(0)
                for x in xs { out += sample(x, y) }
            }
        }
        return out
    }

    private func chunk(_ type: String, _ payload: [UInt8]) -> Data {
        let body = Data(type.utf8) + Data(payload)
        return Data(UInt32(payload.count).bigEndianBytes) + body + Data(PNGBomb.crc32(body).bigEndianBytes)
    }

    private func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, bytes.count - offset)
            let final: UInt8 = offset + length == bytes.count ? 1 : 0
            out += [final, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += bytes[offset..<offset + length]
            offset += length
        } while offset < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + (b << 16 | a).bigEndianBytes
    }
}
