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
            let b = raw.bindMemory(to: UInt8.self)
            var offset = 8
            while offset + 12 <= b.count {
                let length = Int(b[offset]) << 24 | Int(b[offset + 1]) << 16 | Int(b[offset + 2]) << 8 | Int(b[offset + 3])
                guard length <= b.count - offset - 12 else { return }
                let type = PNGChunks.readUInt32(raw, offset + 4)
                if type == PNGChunks.Types.idat || type == PNGChunks.Types.iend { return }
                if type == PNGChunks.Types.srgb { isSRGB = true; return }
                func u32(_ at: Int) -> UInt32 { UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3]) }
                if type == PNGChunks.Types.gama, length == 4 { gamma = u32(offset + 8) }
                if type == PNGChunks.Types.chrm, length == 32 { chromaticities = (0..<8).map { u32(offset + 8 + 4 * $0) } }
                if type == PNGChunks.Types.iccp {
                    let body = (offset + 8)..<(offset + 8 + length)
                    // The name is 1–79 bytes; then its terminator and the compression method (0).
                    if let zero = b[body].prefix(80).firstIndex(of: 0), zero > body.lowerBound, zero + 2 <= body.upperBound, b[zero + 1] == 0 {
                        compressed = Data(UnsafeRawBufferPointer(rebasing: raw[(zero + 2)..<body.upperBound]))
                    } else {
                        compressed = Data()
                    }
                    return
                }
                offset += 12 + length
            }
        }
        if isSRGB { return .none }
        guard let compressed else { return ColorDescription.png(gamma: gamma, chromaticities: chromaticities) }
        guard let profile = ZlibInflate.inflate(compressed, maxBytes: ColorProfile.maxByteCount) else { return .damaged }
        return .bytes(profile)
    }

    /// WebP: the extended format's `ICCP` chunk (raw profile bytes), before the image data.
    static func webPProfile(_ data: Data) -> ICCBytes {
        var result = ICCBytes.none
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            var offset = 12
            while offset + 8 <= b.count {
                let fourCC = String(decoding: UnsafeBufferPointer(rebasing: b[offset..<(offset + 4)]), as: UTF8.self)
                let size = Int(b[offset + 4]) | Int(b[offset + 5]) << 8 | Int(b[offset + 6]) << 16 | Int(b[offset + 7]) << 24
                guard size <= b.count - offset - 8 else {
                    if fourCC == "ICCP" { result = .damaged }
                    return
                }
                if fourCC == "ICCP" {
                    result = size <= ColorProfile.maxByteCount
                        ? .bytes(Data(UnsafeRawBufferPointer(rebasing: raw[(offset + 8)..<(offset + 8 + size)]))) : .damaged
                    return
                }
                if fourCC == "ANMF" || fourCC == "VP8 " || fourCC == "VP8L" { return }
                offset += 8 + size + (size & 1)
            }
        }
        return result
    }
}
