import Foundation

extension BlurHash {
    /// Hashes straight-alpha (not premultiplied) RGBA8 pixels as they are — alpha is ignored, as
    /// BlurHash defines — with `components.x × components.y` components (each 1…9).
    ///
    /// The cost is `width × height × x × y`: hash a small image (``Image/blurHash(components:)``
    /// scales down to 64 pixels a side first). `rgba` must hold `4 × width × height` bytes.
    ///
    /// ```swift
    /// let hash = try BlurHash(rgba: pixels, width: 32, height: 24, components: (4, 3))
    /// ```
    public init(rgba: [UInt8], width: Int, height: Int, components: (x: Int, y: Int) = (4, 3)) throws(PlaceholderError) {
        let (nx, ny) = components
        guard (1...9).contains(nx), (1...9).contains(ny) else { throw .invalidComponents(x: nx, y: ny) }
        guard width > 0, height > 0 else { throw .emptyImage }
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, count <= rgba.count / 4 else {
            throw .invalidSize(width: width, height: height, limit: rgba.count / 4)
        }
        let linear = (0..<count).map { index in
            SIMD3(SRGBTransfer.toLinear[Int(rgba[index * 4])], SRGBTransfer.toLinear[Int(rgba[index * 4 + 1])],
                  SRGBTransfer.toLinear[Int(rgba[index * 4 + 2])])
        }
        let w = Double(width), h = Double(height)
        var factors: [SIMD3<Double>] = []
        for j in 0..<ny {
            for i in 0..<nx {
                let normalisation: Double = i == 0 && j == 0 ? 1 : 2
                let cosX = (0..<width).map { cos(Double.pi * Double(i) * Double($0) / w) }
                var sum = SIMD3<Double>(repeating: 0)
                for y in 0..<height {
                    let cosY = cos(Double.pi * Double(j) * Double(y) / h)
                    for x in 0..<width {
                        sum += normalisation * cosX[x] * cosY * linear[y * width + x]
                    }
                }
                factors.append(sum / (w * h))
            }
        }
        var out: [UInt8] = []
        Base83.encode((nx - 1) + (ny - 1) * 9, length: 1, into: &out)
        let maximum = factors.dropFirst().reduce(0.0) { max($0, abs($1[0]), abs($1[1]), abs($1[2])) }
        let quantisedMaximum = factors.count > 1 ? Int(max(0, min(82, (maximum * 166 - 0.5).rounded(.down)))) : 0
        let maximumValue = Double(quantisedMaximum + 1) / 166
        Base83.encode(quantisedMaximum, length: 1, into: &out)
        let dc = factors[0]
        Base83.encode(SRGBTransfer.toSRGB(dc[0]) << 16 | SRGBTransfer.toSRGB(dc[1]) << 8 | SRGBTransfer.toSRGB(dc[2]), length: 4, into: &out)
        for factor in factors.dropFirst() {
            func quantise(_ value: Double) -> Int {
                let root = pow((value / maximumValue).magnitude, 0.5)
                return Int(max(0, min(18, ((value < 0 ? -root : root) * 9 + 9.5).rounded(.down))))
            }
            Base83.encode(quantise(factor[0]) * 19 * 19 + quantise(factor[1]) * 19 + quantise(factor[2]), length: 2, into: &out)
        }
        try self.init(String(decoding: out, as: UTF8.self))
    }
}
