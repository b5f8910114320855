extension ColorDescription {
    /// The colour space of a PNG's `gAMA` (100000 × the encoding gamma) and `cHRM` (white, red,
    /// green, blue xy, each × 100000), used when it has neither `iCCP` nor `sRGB`.
    ///
    /// Missing `cHRM` means BT.709 primaries and D65; missing `gAMA` means the sRGB curve. A lone
    /// `gAMA` of 1/2.2 (0.45000…0.46000, which most encoders write to mean "sRGB") stays
    /// untagged, as does anything sRGB-equivalent. Values a profile cannot be built from
    /// (zero gamma, chromaticities outside the unit triangle) are damaged metadata.
    static func png(gamma: UInt32?, chromaticities: [UInt32]?) -> EmbeddedColor.ICCBytes {
        guard gamma != nil || chromaticities != nil else { return .none }
        let scale = 100_000.0
        var description = ColorDescription(
            white: d65, red: bt709.red, green: bt709.green, blue: bt709.blue, curves: [.sRGB], name: "PNG gAMA/cHRM")
        if let chromaticities, chromaticities.count == 8 {
            let v = chromaticities.map { Double($0) / scale }
            description.white = Chromaticity(x: v[0], y: v[1])
            description.red = Chromaticity(x: v[2], y: v[3])
            description.green = Chromaticity(x: v[4], y: v[5])
            description.blue = Chromaticity(x: v[6], y: v[7])
        }
        if let gamma {
            let encoding = Double(gamma) / scale
            if chromaticities == nil, (0.45...0.46).contains(encoding) { return .none }
            guard encoding > 0 else { return .damaged }
            // A gamma of 1/2.2 with sRGB's primaries (curves still the default) is what writers mean by sRGB.
            if (0.45...0.46).contains(encoding), description.isSRGB() { return .none }
            description.curves = [.gamma(1 / encoding)]
        }
        guard description.isUsable else { return .damaged }
        return description.isSRGB() ? .none : .described(description)
    }
}
