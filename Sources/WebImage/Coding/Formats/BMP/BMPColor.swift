import Foundation

/// The colour space of a BMP with a V4 or V5 header (`bV5CSType`): an embedded ICC profile
/// (`PROFILE_EMBEDDED`, V5 only: offset and size from the header's start), or calibrated RGB
/// (`LCS_CALIBRATED_RGB`: the primaries' CIE XYZ endpoints in 2.30 fixed point and a 16.16
/// gamma per channel, built into a profile). `LCS_sRGB`, `LCS_WINDOWS_COLOR_SPACE` and linked
/// profiles (a file name: never opened) are untagged. Every offset is checked against the file.
enum BMPColor {
    static let embedded: UInt32 = 0x4D42_4544  // 'MBED'
    static let calibrated: UInt32 = 0

    static func read(_ data: Data) -> EmbeddedColor.ICCBytes {
        data.withUnsafeBytes { b -> EmbeddedColor.ICCBytes in
            let start = 14
            guard b.count >= start + 108, b[0] == 0x42, b[1] == 0x4D else { return .none }
            func u32(_ o: Int) -> UInt32 {
                UInt32(b[start + o]) | UInt32(b[start + o + 1]) << 8 | UInt32(b[start + o + 2]) << 16 | UInt32(b[start + o + 3]) << 24
            }
            let size = Int(u32(0))
            guard size == 108 || size == 124, b.count >= start + size else { return .none }
            switch u32(56) {
            case Self.embedded where size == 124:
                let offset = Int(u32(112)), length = Int(u32(116))
                guard length > 0, length <= ColorProfile.maxByteCount, offset >= size, offset <= b.count - start,
                      length <= b.count - start - offset else { return .damaged }
                return .bytes(Data(UnsafeRawBufferPointer(rebasing: b[(start + offset)..<(start + offset + length)])))
            case Self.calibrated:
                let endpoints = (0..<9).map { Double(Int32(bitPattern: u32(60 + 4 * $0))) / Double(1 << 30) }
                let gammas = (0..<3).map { Double(u32(96 + 4 * $0)) / 65536 }
                return calibratedRGB(endpoints: endpoints, gammas: gammas)
            default:
                return .none
            }
        }
    }

    /// Calibrated RGB: all-zero endpoints (what most writers leave) mean nothing was stated.
    static func calibratedRGB(endpoints: [Double], gammas: [Double]) -> EmbeddedColor.ICCBytes {
        guard endpoints.contains(where: { $0 != 0 }) else { return .none }
        func xy(_ X: Double, _ Y: Double, _ Z: Double) -> ColorDescription.Chromaticity? {
            let sum = X + Y + Z
            guard sum > 0 else { return nil }
            return ColorDescription.Chromaticity(x: X / sum, y: Y / sum)
        }
        let e = endpoints
        guard let red = xy(e[0], e[1], e[2]), let green = xy(e[3], e[4], e[5]), let blue = xy(e[6], e[7], e[8]),
              let white = xy(e[0] + e[3] + e[6], e[1] + e[4] + e[7], e[2] + e[5] + e[8]) else { return .damaged }
        let curves: [ColorDescription.ToneCurve] = gammas.allSatisfy({ $0 == 0 }) ? [.sRGB] : gammas.map { .gamma($0) }
        let description = ColorDescription(white: white, red: red, green: green, blue: blue, curves: curves, name: "BMP calibrated RGB")
        guard description.isUsable else { return .damaged }
        return description.isSRGB() ? .none : .described(description)
    }
}
