import CZlib
import Foundation

/// Puts a kept colour profile (``ColorHandling/keep``) into encoded JPEG, PNG and WebP files,
/// where each format keeps it: JPEG `APP2 ICC_PROFILE` markers after `SOI` (and `APP0`), a PNG
/// `iCCP` chunk after `IHDR`, a WebP `ICCP` chunk after `VP8X` (a simple WebP becomes an extended
/// one). AVIF's encoder embeds it itself. Files whose structure is not the expected one are
/// returned unchanged.
enum ColorProfileEmbedding {
    static func embed(_ profile: ColorProfile, in data: Data, format: ImageFormat, image: Image) -> Data {
        switch format {
        case .jpeg: jpeg(profile.data, data)
        case .png, .apng: png(profile.data, data)
        case .webp: webP(profile.data, data, width: image.pixelWidth, height: image.pixelHeight, hasAlpha: !image.isOpaque)
        default: data
        }
    }

    /// JPEG: the profile in parts of at most 65,519 bytes (a segment's length is 16 bits), each
    /// with "ICC_PROFILE\0", its 1-based number and the number of parts (at most 255).
    static func jpeg(_ icc: Data, _ data: Data) -> Data {
        let partSize = 65_519
        let parts = (icc.count + partSize - 1) / partSize
        guard data.count > 4, data[data.startIndex] == 0xFF, data[data.startIndex + 1] == 0xD8, (1...255).contains(parts) else { return data }
        var insertAt = data.startIndex + 2
        // After a JFIF APP0, which must come first.
        if data[insertAt] == 0xFF, data[insertAt + 1] == 0xE0, insertAt + 4 <= data.endIndex {
            insertAt += 2 + (Int(data[insertAt + 2]) << 8 | Int(data[insertAt + 3]))
            guard insertAt <= data.endIndex else { return data }
        }
        var segments = Data()
        for part in 0..<parts {
            let chunk = icc[(icc.startIndex + part * partSize)..<(icc.startIndex + min(icc.count, (part + 1) * partSize))]
            let length = 2 + 12 + 2 + chunk.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            segments += Data("ICC_PROFILE".utf8) + [0, UInt8(part + 1), UInt8(parts)]
            segments += chunk
        }
        return data[..<insertAt] + segments + data[insertAt...]
    }

    /// PNG: `iCCP` (a name, compression method 0, the zlib-compressed profile) after `IHDR`.
    static func png(_ icc: Data, _ data: Data) -> Data {
        let ihdrEnd = data.startIndex + 8 + 25
        guard data.count > 8 + 25, data[(data.startIndex + 12)..<(data.startIndex + 16)].elementsEqual(Array("IHDR".utf8)),
              let compressed = deflate(icc) else { return data }
        var body = Data("ICC profile".utf8) + [0, 0]
        body += compressed
        return data[..<ihdrEnd] + chunk("iCCP", body, bigEndian: true) + data[ihdrEnd...]
    }

    /// WebP: an `ICCP` chunk right after `VP8X`, with the header's ICC flag set. A simple file
    /// (`VP8 ` or `VP8L` alone) gains a `VP8X` header first.
    static func webP(_ icc: Data, _ data: Data, width: Int, height: Int, hasAlpha: Bool) -> Data {
        let base = data.startIndex
        guard data.count >= 20, data[base..<(base + 4)].elementsEqual(Array("RIFF".utf8)),
              (1...(1 << 24)).contains(width), (1...(1 << 24)).contains(height) else { return data }
        var body = Data(data[(base + 12)...])  // the chunks
        let first = String(decoding: body.prefix(4), as: UTF8.self)
        if first == "VP8X" {
            body[body.startIndex + 8] |= 0x20
            let vp8xEnd = body.startIndex + 18
            body = body[..<vp8xEnd] + chunk("ICCP", icc, bigEndian: false) + body[vp8xEnd...]
        } else {
            func le24(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)] }
            let flags: UInt8 = 0x20 | (hasAlpha ? 0x10 : 0)
            let vp8x = chunk("VP8X", Data([flags, 0, 0, 0] + le24(width - 1) + le24(height - 1)), bigEndian: false)
            body = vp8x + chunk("ICCP", icc, bigEndian: false) + body
        }
        guard let riffSize = UInt32(exactly: 4 + body.count) else { return data }
        return Data("RIFF".utf8) + withUnsafeBytes(of: riffSize.littleEndian) { Data($0) } + Data("WEBP".utf8) + body
    }

    /// A PNG chunk (big-endian length, type, body, CRC) or a RIFF chunk (little-endian length,
    /// padded to an even size).
    private static func chunk(_ type: String, _ body: Data, bigEndian: Bool) -> Data {
        let length = UInt32(clamping: body.count)
        if bigEndian {
            let typed = Data(type.utf8) + body
            let crc = typed.withUnsafeBytes { PNGChunkScan.crc32($0.bindMemory(to: UInt8.self)) }
            return withUnsafeBytes(of: length.bigEndian) { Data($0) } + typed + withUnsafeBytes(of: crc.bigEndian) { Data($0) }
        }
        var out = Data(type.utf8) + withUnsafeBytes(of: length.littleEndian) { Data($0) } + body
        if body.count % 2 == 1 { out.append(0) }
        return out
    }

    private static func deflate(_ bytes: Data) -> Data? {
        var size = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = bytes.withUnsafeBytes { source in
            compress2(&output, &size, source.baseAddress?.assumingMemoryBound(to: Bytef.self), uLong(bytes.count), 9)
        }
        return status == Z_OK ? Data(output[0..<Int(size)]) : nil
    }
}
