import Foundation

/// ICC profiles in JPEG markers, PNG chunks and WebP chunks. Every read is bounds-checked and
/// every length is compared with what is left before use; nothing here traps on any input.
extension EmbeddedColor {
    /// JPEG: `APP2` markers holding "ICC_PROFILE\0", a 1-based sequence number, the number of
    /// markers, then one part of the profile (ICC.1 annex B.4). Every part must be there once.
    static func jpegProfile(_ data: Data) -> ICCBytes {
        let signature = Array("ICC_PROFILE".utf8) + [0]
        var parts: [Int: Data] = [:]
        var expected = 0, damaged = false
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            JPEGSegments.walk(b) { marker, payload, isWhole in
                guard marker == 0xE2, JPEGSegments.payload(b, payload, startsWith: signature) else { return true }
                guard isWhole, payload.count >= 14 else { damaged = true; return true }
                let sequence = Int(b[payload.lowerBound + 12]), count = Int(b[payload.lowerBound + 13])
                if count == 0 || sequence == 0 || sequence > count || (expected != 0 && expected != count) || parts[sequence] != nil {
                    damaged = true
                } else {
                    expected = count
                    parts[sequence] = Data(UnsafeRawBufferPointer(rebasing: raw[(payload.lowerBound + 14)..<payload.upperBound]))
                }
                return true
            }
        }
        guard expected > 0 else { return damaged ? .damaged : .none }
        guard !damaged, parts.count == expected else { return .damaged }
        var profile = Data()
        for sequence in 1...expected { profile.append(parts[sequence]!) }
        return profile.count <= ColorProfile.maxByteCount ? .bytes(profile) : .damaged
    }

    /// PNG: the `iCCP` chunk before `IDAT` — a name, a zero byte, compression method 0, then
    /// the zlib-compressed profile, inflated to at most ``ColorProfile/maxByteCount``. An `sRGB`
    /// chunk means sRGB (untagged). Without either, `gAMA` and `cHRM` describe the colour space
    /// (``ColorDescription/png(gamma:chromaticities:)``), as browsers honour them.
    static func pngProfile(_ data: Data) -> ICCBytes {
        var compressed: Data?
        var gamma: UInt32?, chromaticities: [UInt32]?, isSRGB = false
        data.withUnsafeBytes { raw in
            _ = PNGChunks.walkHeaders(raw) { type, _, body in
                if type == PNGChunks.Types.idat || type == PNGChunks.Types.iend { return false }
                if type == PNGChunks.Types.srgb { isSRGB = true; return false }
                if type == PNGChunks.Types.gama, body.count == 4 { gamma = PNGChunks.readUInt32(raw, body.lowerBound) }
                if type == PNGChunks.Types.chrm, body.count == 32 { chromaticities = (0..<8).map { PNGChunks.readUInt32(raw, body.lowerBound + 4 * $0) } }
                guard type == PNGChunks.Types.iccp else { return true }
                // The name is 1–79 bytes; then its terminator and the compression method (0).
                if let zero = raw[body].prefix(80).firstIndex(of: 0), zero > body.lowerBound, zero + 2 <= body.upperBound, raw[zero + 1] == 0 {
                    compressed = Data(UnsafeRawBufferPointer(rebasing: raw[(zero + 2)..<body.upperBound]))
                } else {
                    compressed = Data()
                }
                return false
            }
        }
        if isSRGB { return .none }
        guard let compressed else { return ColorDescription.png(gamma: gamma, chromaticities: chromaticities) }
        guard let profile = ZlibInflate.inflate(compressed, maxBytes: ColorProfile.maxByteCount) else { return .damaged }
        return .bytes(profile)
    }

    /// WebP: the extended format's `ICCP` chunk (raw profile bytes), before the image data.
    static func webPProfile(_ data: Data) -> ICCBytes {
        let container = WebPContainer(data, frames: false)
        if container.iccpIsTruncated { return .damaged }
        guard let iccp = container.iccp else { return .none }
        return iccp.count <= ColorProfile.maxByteCount ? .bytes(Data(data[data.startIndex + iccp.lowerBound..<data.startIndex + iccp.upperBound])) : .damaged
    }
}
