import CLcms2

/// The fast path for the commonest profiles (Adobe RGB, Display P3, ProPhoto, Rec. 709: a tone
/// curve per channel and a 3 × 3 matrix to the connection space) into sRGB: a table per input
/// channel to linear light, one matrix straight to linear sRGB, and a 16,384-entry table back to
/// sRGB's curve (in integers). LittleCMS 2.14 evaluates the same transform through its general pipeline at
/// 20–30 ns a pixel (as does Pillow's ImageCms); this is a few.
///
/// Both matrices come from the profiles' colorant tags, which ICC adapts to the D50 connection
/// space, so the result is LittleCMS's relative colorimetric (and perceptual: matrix-and-curve
/// profiles have no perceptual table) conversion, to within a level (checked against LittleCMS
/// in the tests). Values outside sRGB's gamut are clipped, as LittleCMS clips them.
struct MatrixShaperConversion: Sendable {
    private let toLinear: [[Int]]     // per channel, 256 entries: linear light in 0...2^20 (20 bits: the darkest levels keep their steps)
    private let matrix: [Int]         // row-major 3 × 3, source linear → sRGB linear, × 2^20
    private let toSRGB: [UInt8]       // linear in 14 bits → sRGB 8-bit
    private static let steps = 16_384
    private static let matrixShift = 20
    private static let linearBits = 20

    /// `nil` unless both profiles are matrix-and-curve RGB profiles with readable tags.
    init?(source: cmsHPROFILE, sRGB: cmsHPROFILE) {
        guard cmsIsMatrixShaper(source) != 0, cmsIsMatrixShaper(sRGB) != 0,
              let sourceMatrix = Self.colorants(source), let sRGBMatrix = Self.colorants(sRGB),
              let inverse = Self.inverse(sRGBMatrix)
        else { return nil }
        var curves: [[Int]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(source, tag) else { return nil }
            let curve = OpaquePointer(raw)  // cmsToneCurve is opaque
            curves.append((0..<256).map { level in
                let linear = cmsEvalToneCurveFloat(curve, Float(level) / 255)
                return Int((Double(min(max(linear, 0), 1)) * Double((1 << Self.linearBits) - 1)).rounded())
            })
        }
        guard let rawOut = cmsReadTag(sRGB, cmsSigRedTRCTag), let reversed = cmsReverseToneCurveEx(4096, OpaquePointer(rawOut))
        else { return nil }
        defer { cmsFreeToneCurve(reversed) }
        toSRGB = (0..<Self.steps).map { step in
            let encoded = cmsEvalToneCurveFloat(reversed, Float(step) / Float(Self.steps - 1))
            return UInt8(clamping: Int((min(max(encoded, 0), 1) * 255).rounded()))
        }
        toLinear = curves
        let product = Self.multiply(inverse, sourceMatrix)
        // Colorants are XYZ near 1: the matrix's entries are a few units at most (checked).
        guard product.allSatisfy({ $0.isFinite && abs($0) < 64 }) else { return nil }
        matrix = product.map { Int(($0 * Float(1 << Self.matrixShift)).rounded()) }
    }

    /// Converts `rows` rows of opaque RGBA8 pixels in place (alpha untouched), in integers: each
    /// channel to 20-bit linear light, the matrix in 2^20 fixed point (64-bit products), a 14-bit index back, clamped.
    func convert(_ pixels: UnsafeMutableRawPointer, stride: Int, width: Int, rows: Int) {
        let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (matrix[0], matrix[1], matrix[2], matrix[3], matrix[4], matrix[5], matrix[6], matrix[7], matrix[8])
        // From 2^20 × 20-bit products to a 14-bit index: shift by 20 + 6.
        let shift = Self.matrixShift + Self.linearBits - 14, half = 1 << (shift - 1), top = Self.steps - 1
        toLinear[0].withUnsafeBufferPointer { red in
            toLinear[1].withUnsafeBufferPointer { green in
                toLinear[2].withUnsafeBufferPointer { blue in
                    toSRGB.withUnsafeBufferPointer { out in
                        for row in 0..<rows {
                            let line = (pixels + row * stride).assumingMemoryBound(to: UInt8.self)
                            for x in 0..<width {
                                let p = line + 4 * x
                                let r = red[Int(p[0])], g = green[Int(p[1])], b = blue[Int(p[2])]
                                let lr = (m0 &* r &+ m1 &* g &+ m2 &* b &+ half) >> shift
                                let lg = (m3 &* r &+ m4 &* g &+ m5 &* b &+ half) >> shift
                                let lb = (m6 &* r &+ m7 &* g &+ m8 &* b &+ half) >> shift
                                p[0] = out[min(max(lr, 0), top)]
                                p[1] = out[min(max(lg, 0), top)]
                                p[2] = out[min(max(lb, 0), top)]
                            }
                        }
                    }
                }
            }
        }
    }

    /// The profile's colorants as the columns of a row-major 3 × 3 matrix (linear RGB → XYZ D50).
    private static func colorants(_ profile: cmsHPROFILE) -> [Float]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let raw = cmsReadTag(profile, tag) else { return nil }
            columns.append(raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        let xs: [Double] = columns.map(\.X), ys: [Double] = columns.map(\.Y), zs: [Double] = columns.map(\.Z)
        let values: [Double] = xs + ys + zs
        guard values.allSatisfy({ $0.isFinite && abs($0) < 16 }) else { return nil }
        return values.map(Float.init)
    }

    private static func multiply(_ a: [Float], _ b: [Float]) -> [Float] {
        var product = [Float](repeating: 0, count: 9)
        for row in 0..<3 {
            for column in 0..<3 {
                var sum: Float = 0
                for k in 0..<3 { sum += a[row * 3 + k] * b[k * 3 + column] }
                product[row * 3 + column] = sum
            }
        }
        return product
    }

    private static func inverse(_ m: [Float]) -> [Float]? {
        let d = Double(m[0]) * Double(m[4] * m[8] - m[5] * m[7]) - Double(m[1]) * Double(m[3] * m[8] - m[5] * m[6])
            + Double(m[2]) * Double(m[3] * m[7] - m[4] * m[6])
        guard abs(d) > 1e-9 else { return nil }
        let c: [Double] = [
            Double(m[4] * m[8] - m[5] * m[7]), Double(m[2] * m[7] - m[1] * m[8]), Double(m[1] * m[5] - m[2] * m[4]),
            Double(m[5] * m[6] - m[3] * m[8]), Double(m[0] * m[8] - m[2] * m[6]), Double(m[2] * m[3] - m[0] * m[5]),
            Double(m[3] * m[7] - m[4] * m[6]), Double(m[1] * m[6] - m[0] * m[7]), Double(m[0] * m[4] - m[1] * m[3]),
        ]
        return c.map { Float($0 / d) }
    }
}
