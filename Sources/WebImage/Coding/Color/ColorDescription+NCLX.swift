extension ColorDescription {
    /// The colour space of ITU-T H.273 code points (an AVIF or HEIF `colr` box of type `nclx`).
    ///
    /// Unspecified primaries are BT.709; unspecified transfer is sRGB. BT.709, BT.601 and BT.2020
    /// transfer (1, 6, 14, 15) is shown with the sRGB curve, as Chromium renders it (those
    /// curves describe a camera, and displays show such content with a curve close to sRGB's).
    /// sRGB itself (BT.709 primaries with an sRGB-like transfer) is untagged. PQ (16) and HLG (18)
    /// are HDR: tone-mapped to SDR (``HDRToneMapping``). The rarer transfers are left
    /// unconverted (untagged), as are unknown code points.
    static func nclx(primaries: Int, transfer: Int) -> EmbeddedColor.ICCBytes {
        guard let space = primaryTable[primaries == 2 ? 1 : primaries] else { return .none }
        let curve: ToneCurve
        switch transfer {
        case 1, 2, 6, 13, 14, 15: curve = .sRGB
        case 4: curve = .gamma(2.2)
        case 5: curve = .gamma(2.8)
        case 8: curve = .gamma(1)
        case 16: curve = .pq
        case 18: curve = .hlg
        default: return .none
        }
        let description = ColorDescription(
            white: space.white, red: space.red, green: space.green, blue: space.blue, curves: [curve],
            name: "\(space.name) (nclx \(primaries)/\(transfer))")
        return description.isSRGB() ? .none : .described(description)
    }

    private typealias Space = (name: String, red: Chromaticity, green: Chromaticity, blue: Chromaticity, white: Chromaticity)

    private static func space(_ name: String, _ r: (Double, Double), _ g: (Double, Double), _ b: (Double, Double), _ w: (Double, Double)) -> Space {
        (name, Chromaticity(x: r.0, y: r.1), Chromaticity(x: g.0, y: g.1), Chromaticity(x: b.0, y: b.1), Chromaticity(x: w.0, y: w.1))
    }

    /// H.273 table 2 (ColourPrimaries): the code points with a gamut (10, CIE XYZ, has none).
    private static let primaryTable: [Int: Space] = [
        1: space("BT.709", (0.64, 0.33), (0.30, 0.60), (0.15, 0.06), (0.3127, 0.3290)),
        4: space("BT.470 M", (0.67, 0.33), (0.21, 0.71), (0.14, 0.08), (0.310, 0.316)),
        5: space("BT.601 625", (0.64, 0.33), (0.29, 0.60), (0.15, 0.06), (0.3127, 0.3290)),
        6: space("BT.601 525", (0.630, 0.340), (0.310, 0.595), (0.155, 0.070), (0.3127, 0.3290)),
        7: space("SMPTE 240M", (0.630, 0.340), (0.310, 0.595), (0.155, 0.070), (0.3127, 0.3290)),
        8: space("Generic film", (0.681, 0.319), (0.243, 0.692), (0.145, 0.049), (0.310, 0.316)),
        9: space("BT.2020", (0.708, 0.292), (0.170, 0.797), (0.131, 0.046), (0.3127, 0.3290)),
        11: space("DCI-P3", (0.680, 0.320), (0.265, 0.690), (0.150, 0.060), (0.314, 0.351)),
        12: space("Display P3", (0.680, 0.320), (0.265, 0.690), (0.150, 0.060), (0.3127, 0.3290)),
        22: space("EBU 3213-E", (0.630, 0.340), (0.295, 0.605), (0.155, 0.077), (0.3127, 0.3290)),
    ]
}
