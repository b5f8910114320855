import Foundation

/// CIE L\*a\*b\* to sRGB by the standard formulas: L\*a\*b\* → XYZ relative to the file's white
/// (D50 unless its `WhitePoint` tag names another), Bradford-adapted to D65, → linear sRGB
/// (IEC 61966-2-1's matrix), clipped to the gamut, → sRGB's transfer curve.
///
/// This is what a colour-managed conversion from a Lab profile to sRGB does (Pillow's LAB → RGB
/// through LittleCMS, Photoshop), and white stays white (255, 255, 255). libtiff's RGBA interface
/// uses a display model of its own instead (a plain 2.4 gamma, no adaptation), up to 12 levels off.
struct CIELabConversion {
    /// XYZ of the reference white (Y = 1).
    private let white: (x: Double, y: Double, z: Double)
    /// XYZ relative to `white` → linear sRGB: sRGB's matrix after Bradford's adaptation to D65
    /// (its three rows).
    private let rows: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)

    /// ICC's D50 (the profile connection space's white, as LittleCMS has it).
    static let d50 = (x: 0.9642, y: 1.0, z: 0.8249)
    private static let d65 = (x: 0.95047, y: 1.0, z: 1.08883)
    private static let bradford: [Double] = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296]
    private static let bradfordInverse: [Double] = [
        0.9869929, -0.1470543, 0.1599627, 0.4323053, 0.5183603, 0.0492912, -0.0085287, 0.0400428, 0.9684867,
    ]
    private static let xyzToLinearSRGB: [Double] = [
        3.2404542, -1.5371385, -0.4985314, -0.9692660, 1.8760108, 0.0415560, 0.0556434, -0.2040259, 1.0572252,
    ]

    /// `whitePoint`: the white's chromaticity (x, y); `nil` for D50.
    init(whitePoint: (x: Double, y: Double)? = nil) {
        let source = whitePoint.map { (x: $0.x / $0.y, y: 1.0, z: (1 - $0.x - $0.y) / $0.y) } ?? Self.d50
        white = source
        let from = Self.multiply(Self.bradford, [source.x, source.y, source.z])
        let to = Self.multiply(Self.bradford, [Self.d65.x, Self.d65.y, Self.d65.z])
        // Bradford⁻¹ · diag(cone ratios) · Bradford
        var scaled = Self.bradford
        for row in 0..<3 { for column in 0..<3 { scaled[row * 3 + column] *= to[row] / from[row] } }
        let matrix = Self.product(Self.xyzToLinearSRGB, Self.product(Self.bradfordInverse, scaled))
        rows = (SIMD3(matrix[0], matrix[1], matrix[2]), SIMD3(matrix[3], matrix[4], matrix[5]), SIMD3(matrix[6], matrix[7], matrix[8]))
    }

    /// sRGB bytes for L\* (0...100), a\*, b\*.
    func srgb(l: Double, a: Double, b: Double) -> (UInt8, UInt8, UInt8) {
        let epsilon = 216.0 / 24389, kappa = 24389.0 / 27
        let fy = (l + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        func inverse(_ f: Double) -> Double { f * f * f > epsilon ? f * f * f : (116 * f - 16) / kappa }
        let xyz = SIMD3(white.x * inverse(fx), white.y * (l > kappa * epsilon ? fy * fy * fy : l / kappa), white.z * inverse(fz))
        return (Self.encode((rows.0 * xyz).sum()), Self.encode((rows.1 * xyz).sum()), Self.encode((rows.2 * xyz).sum()))
    }

    // MARK: - Internals

    /// sRGB's transfer curve, tabulated over 65,536 linear steps (half a level at most off the formula).
    private static let curve: [UInt8] = (0...65535).map { step in
        let linear = Double(step) / 65535
        let encoded = linear <= 0.0031308 ? 12.92 * linear : 1.055 * Foundation.pow(linear, 1 / 2.4) - 0.055
        return UInt8((encoded * 255).rounded())
    }

    private static func encode(_ linear: Double) -> UInt8 {
        guard linear > 0 else { return 0 }  // NaN too
        return curve[Int((min(linear, 1) * 65535).rounded())]
    }

    private static func multiply(_ m: [Double], _ v: [Double]) -> [Double] {
        (0..<3).map { row in m[row * 3] * v[0] + m[row * 3 + 1] * v[1] + m[row * 3 + 2] * v[2] }
    }

    private static func product(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { (i: Int) -> Double in
            let row = i / 3, column = i % 3
            var sum = 0.0
            for k in 0..<3 { sum += a[row * 3 + k] * b[k * 3 + column] }
            return sum
        }
    }
}
