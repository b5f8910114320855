import CLcms2

/// The fast path for the commonest profiles (Adobe RGB, Display P3, ProPhoto, Rec. 709: a tone
/// curve per channel and a 3 × 3 matrix to the connection space) into sRGB. The matrix is folded
/// into the input curves: nine 256-entry tables give each 8-bit input level's contribution, in
/// fixed point, to each linear sRGB channel, so a pixel costs nine table reads, six additions
/// and three reads of a 16,384-entry table back to sRGB's curve (about 4 ns on one core, where
/// LittleCMS 2.14's transform, as Pillow's ImageCms uses it, takes 15–17). Where the CPU has
/// AVX-512 VBMI or AVX2, ``VectorMatrixShaper`` does the same conversion 64 or 8 pixels at a time
/// instead (about 0.85 or 2 ns a pixel); these tables are the fallback.
///
/// Both matrices come from the profiles' colorant tags, which ICC adapts to the D50 connection
/// space, so the result is LittleCMS's relative colorimetric (and perceptual: matrix-and-curve
/// profiles have no perceptual table) conversion, to within a level (checked against LittleCMS
/// in the tests). Values outside sRGB's gamut are clipped, as LittleCMS clips them.
struct MatrixShaperConversion: Sendable {
    /// `contributions[(channel * 256 + level) * 4 + output]`: input `channel` at `level`, through
    /// its curve and the matrix, into linear sRGB `output`, × 2^(14 + ``fraction``) (the fourth
    /// slot pads each entry to 16 bytes).
    private let contributions: [Int32]
    /// Fractional bits below the 14-bit index: 14, fewer when the matrix is so large that a
    /// sum of three contributions could leave `Int32`.
    private let fraction: Int32
    private let toSRGB: [UInt8]       // linear in 14 bits → sRGB 8-bit
    private static let steps = 16_384
    /// The vectorised kernel, where the CPU has one (see ``VectorMatrixShaper``).
    private let vector: VectorMatrixShaper?
    /// The vectorised kernel ``convert(_:stride:width:rows:)`` runs, `nil` for the scalar tables.
    var kernel: VectorMatrixShaper.Kernel? { vector?.kernel }

    /// `nil` unless both profiles are matrix-and-curve RGB profiles with readable tags.
    /// `kernel`: the vectorised kernel to use (the best one this CPU runs unless told; `nil` keeps
    /// to the scalar tables; the tests compare them all).
    init?(source: cmsHPROFILE, sRGB: cmsHPROFILE, kernel: VectorMatrixShaper.Kernel? = VectorMatrixShaper.Kernel.best) {
        guard cmsIsMatrixShaper(source) != 0, cmsIsMatrixShaper(sRGB) != 0,
              let sourceMatrix = Self.colorants(source), let sRGBMatrix = Self.colorants(sRGB),
              let inverse = Self.inverse(sRGBMatrix)
        else { return nil }
        let matrix = Self.multiply(inverse, sourceMatrix)
        // Colorants are XYZ near 1: the matrix's entries are a few units at most (checked).
        guard matrix.allSatisfy({ $0.isFinite && abs($0) < 64 }) else { return nil }
        // A row's three contributions must add up within Int32: |row| × 2^(14 + fraction) < 2^30.
        let largestRow = (0..<3).map { row in (0..<3).map { Double(abs(matrix[row * 3 + $0])) }.reduce(0, +) }.max() ?? 1
        var fraction: Int32 = 14
        while fraction > 0, largestRow * Double(1 << (14 + Int(fraction))) >= Double(1 << 30) { fraction -= 1 }
        let scale = Double(1 << (14 + Int(fraction)))
        var contributions = [Int32](repeating: 0, count: 3 * 256 * 4)
        var linearLevels = [Double](repeating: 0, count: 3 * 256)
        for (channel, tag) in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag].enumerated() {
            guard let raw = cmsReadTag(source, tag) else { return nil }
            let curve = OpaquePointer(raw)  // cmsToneCurve is opaque
            for level in 0..<256 {
                let linear = Double(min(max(cmsEvalToneCurveFloat(curve, Float(level) / 255), 0), 1))
                linearLevels[channel * 256 + level] = linear
                for output in 0..<3 {
                    contributions[(channel * 256 + level) * 4 + output] = Int32((Double(matrix[output * 3 + channel]) * linear * scale).rounded())
                }
            }
        }
        guard let rawOut = cmsReadTag(sRGB, cmsSigRedTRCTag), let reversed = cmsReverseToneCurveEx(4096, OpaquePointer(rawOut))
        else { return nil }
        defer { cmsFreeToneCurve(reversed) }
        toSRGB = (0..<Self.steps).map { step in
            let encoded = cmsEvalToneCurveFloat(reversed, Float(step) / Float(Self.steps - 1))
            return UInt8(clamping: Int((min(max(encoded, 0), 1) * 255).rounded()))
        }
        self.contributions = contributions
        self.fraction = fraction
        let encoded = toSRGB
        vector = kernel.flatMap { VectorMatrixShaper(linear: linearLevels, matrix: matrix, toSRGB: encoded, kernel: $0) }
    }

    /// Converts `rows` rows of opaque RGBA8 pixels in place (alpha untouched): with the vectorised
    /// kernel where there is one, else with the scalar tables.
    func convert(_ pixels: UnsafeMutableRawPointer, stride: Int, width: Int, rows: Int) {
        if let vector { return vector.convert(pixels, stride: stride, width: width, rows: rows) }
        convertScalar(pixels, stride: stride, width: width, rows: rows)
    }

    /// The scalar kernel. Each pixel is read and written as one 32-bit word and clamped without
    /// branches (the byte-wise kernel before took 8.7 ns a pixel on random colours, against about
    /// 3; 4.1 against 3.8 on a photo).
    func convertScalar(_ pixels: UnsafeMutableRawPointer, stride: Int, width: Int, rows: Int) {
        let fraction = fraction, half: Int32 = fraction > 0 ? 1 << (fraction - 1) : 0, top = Int32(Self.steps - 1)
        contributions.withUnsafeBufferPointer { table in
            toSRGB.withUnsafeBufferPointer { out in
                guard let t = table.baseAddress, let o = out.baseAddress else { return }
                for row in 0..<rows {
                    // Rows start at multiples of 4 bytes (the stride holds whole RGBA pixels).
                    let line = (pixels + row * stride).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<width {
                        // Little- or big-endian alike: R is the first byte in memory.
                        let word = UInt32(littleEndian: line[x])
                        let r = Int(word & 0xFF) &* 4, g = (256 &+ Int((word >> 8) & 0xFF)) &* 4, b = (512 &+ Int((word >> 16) & 0xFF)) &* 4
                        let lr = (t[r] &+ t[g] &+ t[b] &+ half) &>> fraction
                        let lg = (t[r + 1] &+ t[g + 1] &+ t[b + 1] &+ half) &>> fraction
                        let lb = (t[r + 2] &+ t[g + 2] &+ t[b + 2] &+ half) &>> fraction
                        let red = UInt32(o[Int(min(max(lr, 0), top))])
                        let green = UInt32(o[Int(min(max(lg, 0), top))])
                        let blue = UInt32(o[Int(min(max(lb, 0), top))])
                        line[x] = (word & 0xFF00_0000 | red | green << 8 | blue << 16).littleEndian
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
