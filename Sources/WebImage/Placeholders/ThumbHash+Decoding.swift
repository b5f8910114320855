import Foundation

extension ThumbHash {
    /// The placeholder at the hash's natural size: 32 pixels on the long side, the other side from
    /// ``approximateAspectRatio``. Straight colours are clamped to 0…255 and truncated, as
    /// ThumbHash's own decoder does, then premultiplied (see ``Image``).
    ///
    /// ```swift
    /// let placeholder = try ThumbHash(base64: text).image()
    /// ```
    public func image() -> Image {
        let header = Header(bytes)
        let (lx, ly) = (header.lx, header.ly)
        var index = 0
        func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            (1...Self.acCount(nx, ny)).map { _ in
                let byte = bytes[header.acStart + index / 2]
                let nibble = Int(byte >> (UInt8(index % 2) * 4)) & 15
                index += 1
                return (Double(nibble) / 7.5 - 1) * scale
            }
        }
        // Saturation boosted by 1.25 to make up for quantisation, as ThumbHash's decoder does.
        let lAC = channel(lx, ly, header.lScale)
        let pAC = channel(3, 3, header.pScale * 1.25), qAC = channel(3, 3, header.qScale * 1.25)
        let aAC = header.hasAlpha ? channel(5, 5, header.aScale) : []
        let ratio = approximateAspectRatio
        let w = Int(Self.round(ratio > 1 ? 32 : 32 * ratio)), h = Int(Self.round(ratio > 1 ? 32 / ratio : 32))
        let lTerms = Array(Self.acIndices(lx, ly).dropFirst()), pqTerms = Array(Self.acIndices(3, 3).dropFirst())
        let aTerms = Array(Self.acIndices(5, 5).dropFirst())
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        let n = max(lx, ly, 5)
        for y in 0..<h {
            let fy = (0..<n).map { cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double($0)) }
            for x in 0..<w {
                let fx = (0..<n).map { cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double($0)) }
                var (l, p, q, a) = (header.lDC, header.pDC, header.qDC, header.aDC)
                for (j, term) in lTerms.enumerated() { l += lAC[j] * fx[term.cx] * (fy[term.cy] * 2) }
                for (j, term) in pqTerms.enumerated() {
                    let f = fx[term.cx] * (fy[term.cy] * 2)
                    p += pAC[j] * f
                    q += qAC[j] * f
                }
                for (j, term) in aTerms.enumerated() where header.hasAlpha { a += aAC[j] * fx[term.cx] * (fy[term.cy] * 2) }
                let rgb = header.rgb(l: l, p: p, q: q)
                let offset = (y * w + x) * 4
                for (c, value) in [rgb[0], rgb[1], rgb[2], a].enumerated() {
                    rgba[offset + c] = UInt8(max(0, 255 * min(1, value)))
                }
            }
        }
        let opaque = PixelOperations.premultiply(&rgba)
        return Image(format: .png, pixelWidth: w, pixelHeight: h, pixels: rgba, isOpaque: opaque)
    }
}
