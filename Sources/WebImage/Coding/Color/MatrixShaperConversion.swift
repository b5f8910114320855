import CLcms2

/// The fast path for the commonest profiles (Adobe RGB, Display P3, ProPhoto, Rec. 709: a tone
/// curve per channel and a 3 × 3 matrix to the connection space) into sRGB: a table per input
/// channel to linear light, one matrix straight to linear sRGB, and a 16,384-entry table back to
/// sRGB's curve. LittleCMS 2.14 evaluates the same transform through its general pipeline at
/// 20–30 ns a pixel (as does Pillow's ImageCms); this is a few.
///
/// Both matrices come from the profiles' colorant tags, which ICC adapts to the D50 connection
/// space, so the result is LittleCMS's relative colorimetric (and perceptual: matrix-and-curve
/// profiles have no perceptual table) conversion, to within a level (checked against LittleCMS
/// in the tests). Values outside sRGB's gamut are clipped, as LittleCMS clips them.
struct MatrixShaperConversion: Sendable {
    private let toLinear: [[Float]]   // per channel, 256 entries
    private let matrix: [Float]       // row-major 3 × 3, source linear → sRGB linear
    private let toSRGB: [UInt8]       // linear [0, 1] in `steps` steps → sRGB 8-bit
    private static let steps = 16_384

    /// `nil` unless both profiles are matrix-and-curve RGB profiles with readable tags.
    init?(source: cmsHPROFILE, sRGB: cmsHPROFILE) {
        guard cmsIsMatrixShaper(source) != 0, cmsIsMatrixShaper(sRGB) != 0,
              let sourceMatrix = Self.colorants(source), let sRGBMatrix = Self.colorants(sRGB),
              let inverse = Self.inverse(sRGBMatrix)
        else { return nil }
        var curves: [[Float]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(source, tag) else { return nil }
            let curve = OpaquePointer(raw)  // cmsToneCurve is opaque
            curves.append((0..<256).map { cmsEvalToneCurveFloat(curve, Float($0) / 255) })
        }
        guard let rawOut = cmsReadTag(sRGB, cmsSigRedTRCTag), let reversed = cmsReverseToneCurveEx(4096, OpaquePointer(rawOut))
        else { return nil }
        defer { cmsFreeToneCurve(reversed) }
        toSRGB = (0..<Self.steps).map { step in
            let encoded = cmsEvalToneCurveFloat(reversed, Float(step) / Float(Self.steps - 1))
            return UInt8(clamping: Int((min(max(encoded, 0), 1) * 255).rounded()))
        }
        toLinear = curves
        matrix = Self.multiply(inverse, sourceMatrix)
    }

    /// Converts `rows` rows of opaque RGBA8 pixels in place (alpha untouched).
    func convert(_ pixels: UnsafeMutableRawPointer, stride: Int, width: Int, rows: Int) {
        let m = matrix, scale = Float(Self.steps - 1)
        toLinear[0].withUnsafeBufferPointer { red in
            toLinear[1].withUnsafeBufferPointer { green in
                toLinear[2].withUnsafeBufferPointer { blue in
                    toSRGB.withUnsafeBufferPointer { out in
                        for row in 0..<rows {
                            let line = (pixels + row * stride).assumingMemoryBound(to: UInt8.self)
                            for x in 0..<width {
                                let p = line + 4 * x
                                let r = red[Int(p[0])], g = green[Int(p[1])], b = blue[Int(p[2])]
                                let lr = m[0] * r + m[1] * g + m[2] * b
                                let lg = m[3] * r + m[4] * g + m[5] * b
                                let lb = m[6] * r + m[7] * g + m[8] * b
                                p[0] = out[Int(min(max(lr, 0), 1) * scale + 0.5)]
                                p[1] = out[Int(min(max(lg, 0), 1) * scale + 0.5)]
                                p[2] = out[Int(min(max(lb, 0), 1) * scale + 0.5)]
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
