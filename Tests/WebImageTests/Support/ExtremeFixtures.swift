import Foundation
import WebImage

/// Small files whose fields sit at their type's limits (longest delays, most frames, largest
/// sizes and offsets), built byte by byte: the inputs of ``UntrustedArithmeticTests``.
enum ExtremeWebP {
    /// The longest delay an `ANMF` chunk stores: 24 bits of milliseconds.
    static let longestDelay = 0xFF_FFFF

    /// An animated 1 × 1 WebP of `frames` frames of `delay` ms each (about 50 bytes a frame):
    /// with 200 frames of the longest delay, libwebp's `int` timestamps pass `Int32.max` after
    /// frame 128 and wrap.
    static func longAnimation(frames: Int = 200, delay: Int = longestDelay, loopCount: UInt16 = 0) throws -> Data {
        let pixel = Image(format: .webp, pixelWidth: 1, pixelHeight: 1, pixels: [10, 20, 30, 255], isOpaque: true)
        let vp8l = Data(try WebPCoder().encode(pixel, as: .webp, quality: 1)[12...])  // the VP8L chunk
        let anmf = chunk("ANMF", Data(le24(0) + le24(0) + le24(0) + le24(0) + le24(delay) + [0]) + vp8l)
        let body = Data("WEBP".utf8) + chunk("VP8X", Data([0x02, 0, 0, 0] + le24(0) + le24(0)))
            + chunk("ANIM", Data([0, 0, 0, 0, UInt8(loopCount & 0xFF), UInt8(loopCount >> 8)]))
            + Data(repeatElement(anmf, count: frames).joined())
        return Data("RIFF".utf8) + le32(body.count) + body
    }

    static func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
    static func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { Data($0) } }

    static func chunk(_ tag: String, _ payload: Data) -> Data {
        Data(tag.utf8) + le32(payload.count) + payload + (payload.count % 2 == 1 ? Data([0]) : Data())
    }
}

enum ExtremeGIF {
    /// GIF's longest delay: 65535 centiseconds (10 min 55 s).
    static let longestDelay: UInt16 = 65_535

    /// A 1 × 1 GIF of `frames` frames, each behind a graphic control extension of `delay`
    /// centiseconds (23 bytes a frame): 3,400 frames of the longest delay last 25.8 days,
    /// more milliseconds than `Int32` holds.
    static func longAnimation(frames: Int = 3_400, delay: UInt16 = longestDelay, loopCount: UInt16 = 0) -> Data {
        var data = Data("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        data += [0x21, 0xFF, 11] + Data("NETSCAPE2.0".utf8) + [3, 1, UInt8(loopCount & 0xFF), UInt8(loopCount >> 8), 0]
        let frame: [UInt8] = [0x21, 0xF9, 4, 0, UInt8(delay & 0xFF), UInt8(delay >> 8), 0, 0]
            + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0]
        for _ in 0..<frames { data += frame }
        return data + [0x3B]
    }
}

/// PNG and APNG streams with any field value, chunk CRCs computed (or not).
enum ExtremePNG {
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }

    /// A chunk; `length` overrides the stored length (the data stays as given).
    static func chunk(_ type: String, _ data: [UInt8], length: UInt32? = nil) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(length ?? UInt32(data.count)) + body + be32(crc(body))
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func ihdr(width: UInt32, height: UInt32) -> [UInt8] { chunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0]) }

    /// One 1 × 1 RGBA IDAT (a stored deflate block).
    static let pixelData: [UInt8] = chunk("IDAT", [0x78, 0x01, 0x01, 0x05, 0x00, 0xFA, 0xFF, 0, 10, 20, 30, 255, 0x01, 0xA4, 0x01, 0x3C])

    /// An APNG of a 1 × 1 canvas whose `acTL` and `fcTL` fields are given: `frames` frames of
    /// `delay` (numerator, denominator), `plays` plays, the default image the first frame.
    static func apng(frames: Int, declared: UInt32? = nil, plays: UInt32, delay: (UInt16, UInt16),
                     region: (x: UInt32, y: UInt32, width: UInt32, height: UInt32) = (0, 0, 1, 1)) -> Data {
        var out = signature + ihdr(width: 1, height: 1) + chunk("acTL", be32(declared ?? UInt32(frames)) + be32(plays))
        var sequence: UInt32 = 0
        func fctl(_ r: (x: UInt32, y: UInt32, width: UInt32, height: UInt32)) -> [UInt8] {
            defer { sequence += 1 }
            return chunk("fcTL", be32(sequence) + be32(r.width) + be32(r.height) + be32(r.x) + be32(r.y) + be16(delay.0) + be16(delay.1) + [0, 0])
        }
        out += fctl((0, 0, 1, 1)) + pixelData
        let idatData = Array(pixelData[8..<(pixelData.count - 4)])
        for _ in 1..<max(frames, 1) {
            out += fctl(region)
            out += chunk("fdAT", be32(sequence) + idatData)
            sequence += 1
        }
        return Data(out + chunk("IEND", []))
    }
}

/// Little-endian TIFFs built entry by entry, with any tag value.
enum ExtremeTIFF {
    /// One IFD per page, each `(tag, type, count, value)`; type 3 SHORT or 4 LONG, value inline.
    /// Pages are chained; `nextOffsets` overrides a page's next-IFD offset.
    static func file(pages: [[(UInt16, UInt16, UInt32, UInt32)]], pixelBytes: [UInt8] = [0, 0, 0, 0]) -> Data {
        var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(8)
        // Pixel data after the header and every IFD.
        let ifdSizes = pages.map { 2 + $0.count * 12 + 4 }
        let pixelOffset = 8 + ifdSizes.reduce(0, +)
        var offset = 8
        for (index, page) in pages.enumerated() {
            offset += ifdSizes[index]
            out += le16(UInt16(page.count))
            for (tag, type, count, value) in page.sorted(by: { $0.0 < $1.0 }) {
                let resolved = value == UInt32.max - 1 ? UInt32(pixelOffset) : value  // UInt32.max − 1: "the pixel data"
                out += le16(tag) + le16(type) + le32(count) + (type == 3 ? le16(UInt16(truncatingIfNeeded: resolved)) + [0, 0] : le32(resolved))
            }
            out += le32(index + 1 < pages.count ? UInt32(offset) : 0)
        }
        return Data(out + pixelBytes)
    }

    /// A 1 × 1 8-bit grey page, strip at the pixel data; `overrides` replace or add entries.
    static func page(_ overrides: [(UInt16, UInt16, UInt32, UInt32)] = []) -> [(UInt16, UInt16, UInt32, UInt32)] {
        var entries: [UInt16: (UInt16, UInt16, UInt32, UInt32)] = [
            256: (256, 4, 1, 1), 257: (257, 4, 1, 1), 258: (258, 3, 1, 8), 259: (259, 3, 1, 1), 262: (262, 3, 1, 1),
            273: (273, 4, 1, UInt32.max - 1), 277: (277, 3, 1, 1), 278: (278, 4, 1, 1), 279: (279, 4, 1, 1),
        ]
        for entry in overrides { entries[entry.0] = entry }
        return Array(entries.values)
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    static func le32(_ v: Int) -> [UInt8] { le32(UInt32(truncatingIfNeeded: v)) }
}

/// BMP and ICO/CUR files with any header field.
enum ExtremeBMP {
    static func le32(_ v: UInt32) -> [UInt8] { ExtremeTIFF.le32(v) }
    static func le16(_ v: UInt16) -> [UInt8] { ExtremeTIFF.le16(v) }

    /// A BITMAPINFOHEADER (40 bytes) with the fields given, then `tail` (masks, palette, pixels).
    static func dib(width: Int32, height: Int32, bitCount: UInt16 = 32, compression: UInt32 = 0, colorsUsed: UInt32 = 0,
                    tail: [UInt8] = [0, 0, 0, 0]) -> [UInt8] {
        le32(40) + le32(UInt32(bitPattern: width)) + le32(UInt32(bitPattern: height)) + le16(1) + le16(bitCount)
            + le32(compression) + le32(0) + le32(0) + le32(0) + le32(colorsUsed) + le32(0) + tail
    }

    static func bmp(pixelOffset: UInt32 = 54, _ dib: [UInt8]) -> Data {
        Data([0x42, 0x4D] + le32(UInt32(truncatingIfNeeded: 14 + dib.count)) + le32(0) + le32(pixelOffset) + dib)
    }

    /// An ICO directory of `count` entries, each `(size, offset)`, then `images`.
    static func ico(count: Int, entry: (Int) -> (size: UInt32, offset: UInt32), images: [UInt8] = []) -> Data {
        var out: [UInt8] = [0, 0, 1, 0] + le16(UInt16(count))
        for index in 0..<count {
            let (size, offset) = entry(index)
            out += [0, 0, 0, 0] + le16(1) + le16(32) + le32(size) + le32(offset)
        }
        return Data(out + images)
    }
}
