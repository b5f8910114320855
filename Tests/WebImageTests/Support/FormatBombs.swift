import Foundation
import WebImage

/// Tiny GIF and WebP files whose headers declare enormous images.
enum GIFBomb {
    /// A 65535 × 65535 screen (GIF's largest) with one 1 × 1 frame: a few dozen bytes.
    static func header(width: UInt16 = 65_535, height: UInt16 = 65_535) -> Data {
        var data = Data("GIF89a".utf8)
        data += [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 0x80, 0, 0]
        data += [0, 0, 0, 255, 255, 255]                      // global palette: 2 colours
        data += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]             // image descriptor, 1 × 1
        data += [2, 2, 0x4C, 0x01, 0, 0x3B]                   // LZW data, trailer
        return data
    }

    /// A `width × height` screen with `frames` 1 × 1 frames: many frames, few bytes.
    static func manyFrames(width: UInt16, height: UInt16, frames: Int) -> Data {
        var data = header(width: width, height: height).dropLast()
        let frame = Data([0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0])
        for _ in 1..<frames { data += frame }
        return data + [0x3B]
    }

    /// A `width × height` screen with `frames` 1 × 1 white frames, each one pixel further along
    /// the rows: every composited frame differs from the one before (no encoder can merge them).
    static func distinctFrames(width: UInt16, height: UInt16, frames: Int) -> Data {
        var data = header(width: width, height: height).dropLast()
        for index in 1..<frames {
            let x = UInt16(index % Int(width)), y = UInt16(index / Int(width) % Int(height))
            data += [0x2C, UInt8(x & 0xFF), UInt8(x >> 8), UInt8(y & 0xFF), UInt8(y >> 8), 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0]
        }
        return data + [0x3B]
    }
}

enum WebPBomb {
    /// An animated extended WebP whose canvas is `width × height`, holding one 1 × 1 frame.
    static func header(width: Int = 100_000, height: Int = 100_000) throws -> Data {
        let pixel = Image(format: .webp, pixelWidth: 1, pixelHeight: 1, pixels: [10, 20, 30, 255], isOpaque: true)
        let still = try WebPCoder().encode(pixel, as: .webp, quality: 1)
        let vp8l = Data(still[12...])                          // the VP8L chunk, header included
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
        func chunk(_ tag: String, _ payload: Data) -> Data {
            var out = Data(tag.utf8) + withUnsafeBytes(of: UInt32(payload.count).littleEndian) { Data($0) } + payload
            if payload.count % 2 == 1 { out.append(0) }
            return out
        }
        let vp8x = chunk("VP8X", Data([0x02, 0, 0, 0] + le24(width - 1) + le24(height - 1)))
        let anim = chunk("ANIM", Data([0, 0, 0, 0, 0, 0]))
        let anmf = chunk("ANMF", Data(le24(0) + le24(0) + le24(0) + le24(0) + le24(100) + [0]) + vp8l)
        let body = Data("WEBP".utf8) + vp8x + anim + anmf
        return Data("RIFF".utf8) + withUnsafeBytes(of: UInt32(body.count).littleEndian) { Data($0) } + body
    }
}

enum TIFFBomb {
    /// A little-endian TIFF whose first page is `side × side` 8-bit grey and whose `pages - 1`
    /// other pages are 1 × 1: every row of the big page is one PackBits run of zeros, and all its
    /// strips point at the same bytes, so the file stays small (about 60 KB + 150 bytes a page).
    static func pages(side: Int = 7000, pages: Int = 999) -> Data {
        var row: [UInt8] = []
        var left = side
        while left > 0 {
            let run = min(left, 128)
            row += run == 1 ? [0, 0] : [UInt8(truncatingIfNeeded: 1 - run), 0]
            left -= run
        }
        var out = Data("II".utf8) + le16(42) + le32(0)
        let rowOffset = out.count
        out += row
        if out.count % 2 == 1 { out.append(0) }
        let offsetsAt = out.count
        for _ in 0..<side { out += le32(rowOffset) }
        let countsAt = out.count
        for _ in 0..<side { out += le32(row.count) }
        let pixelAt = out.count
        out += [0x80, 0]
        func ifd(_ entries: [(tag: UInt16, type: UInt16, count: Int, value: Int)], last: Bool) {
            out += le16(entries.count)
            for entry in entries {
                out += le16(Int(entry.tag)) + le16(Int(entry.type)) + le32(entry.count)
                out += entry.type == 3 && entry.count == 1 ? le16(entry.value) + le16(0) : le32(entry.value)
            }
            out += le32(last ? 0 : out.count + 4)
        }
        let first = out.count
        out.replaceSubrange(4..<8, with: le32(first))
        ifd([(256, 4, 1, side), (257, 4, 1, side), (258, 3, 1, 8), (259, 3, 1, 32773), (262, 3, 1, 1),
             (273, 4, side, offsetsAt), (277, 3, 1, 1), (278, 4, 1, 1), (279, 4, side, countsAt)], last: pages == 1)
        for page in 1..<max(pages, 1) {
            ifd([(256, 4, 1, 1), (257, 4, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
                 (273, 4, 1, pixelAt), (277, 3, 1, 1), (278, 4, 1, 1), (279, 4, 1, 1)], last: page == pages - 1)
        }
        return out
    }

    private static func le16(_ value: Int) -> Data { withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian) { Data($0) } }
    private static func le32(_ value: Int) -> Data { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { Data($0) } }
}
