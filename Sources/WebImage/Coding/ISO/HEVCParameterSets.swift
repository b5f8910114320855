/// The fields of HEVC network abstraction layer units that say how large and how many pictures
/// a HEIC item's data makes: the luma size of a sequence parameter set (SPS, H.265 7.3.2.2) and
/// whether a slice starts a picture. libde265 allocates what an SPS says, and decodes every
/// picture in the data libheif gives it (libheif keeps the last).
///
/// ```swift
/// HEVCParameterSets.lumaSize(ofSPS: unit)  // (1400, 1400) for a 1400 × 1400 picture
/// ```
enum HEVCParameterSets {
    static let spsType = 33

    /// A unit's type (its header's bits 1–6).
    static func type(_ header: UInt8) -> Int { Int(header >> 1) & 0x3F }

    /// Whether a unit is a slice of layer 0 that starts a picture (`first_slice_segment_in_pic_flag`).
    static func startsPicture(_ unit: [UInt8]) -> Bool {
        guard unit.count >= 3, type(unit[0]) < 32, unit[0] & 1 == 0, unit[1] >> 3 == 0 else { return false }
        return unit[2] & 0x80 != 0
    }

    /// The luma size an SPS unit (its two header bytes first) declares, or `nil` when the unit
    /// does not hold one that can be read (libde265 refuses those too).
    static func lumaSize(ofSPS unit: [UInt8]) -> (width: Int, height: Int)? {
        guard unit.count > 2, type(unit[0]) == spsType else { return nil }
        var reader = BitReader(payload(unit.dropFirst(2)))
        guard reader.skip(4), let subLayers = reader.bits(3), reader.skip(1),
              reader.skip(96) else { return nil }  // general profile, tier and level: 88 + 8 bits
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers {
            guard let profile = reader.flag(), let level = reader.flag() else { return nil }
            present.append((profile, level))
        }
        if subLayers > 0, !reader.skip(2 * (8 - subLayers)) { return nil }
        for layer in present {
            guard reader.skip(layer.profile ? 88 : 0), reader.skip(layer.level ? 8 : 0) else { return nil }
        }
        guard reader.expGolomb() != nil, let chroma = reader.expGolomb() else { return nil }
        if chroma == 3, !reader.skip(1) { return nil }
        guard let width = reader.expGolomb(), let height = reader.expGolomb() else { return nil }
        return (width, height)
    }

    /// A unit's payload without its emulation-prevention bytes (`00 00 03` → `00 00`).
    private static func payload(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            if zeros >= 2, byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }
}
