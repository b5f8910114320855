/// Cutting premultiplied RGBA8 to a rounded rectangle, with an optional border painted along the
/// inside of its edge: what ``ImageProcessors/RoundedCorners`` and ``ImageProcessors/Circle``
/// (a square with a radius of half its side) share.
///
/// Coverage is anti-aliased from the signed distance of each pixel centre to the shape:
/// `clamp(0.5 − distance, 0, 1)`, a one-pixel-wide ramp across the edge. The border is the
/// part of the shape outside the same rectangle inset by the border width (its radius reduced
/// as much), so its inner edge is anti-aliased too. A pixel becomes
/// `outer × (border × ring + pixel × (1 − borderAlpha × ring))` with `ring = 1 − inner`.
/// Pixels well inside the border (or the edge) are skipped.
struct ShapeMask {
    let width: Int, height: Int
    let radius: Double
    let border: (width: Double, color: SIMD4<Float>, alpha: Float)?

    /// Applies the mask to packed `width × height` pixels in place. Per row, only the band
    /// across the edge (and the border) is shaded: pixels well inside are left as they are, and
    /// pixels more than a pixel outside get no coverage, so they are cleared in one pass (the
    /// corners outside a circle are a fifth of its square; shading them one by one made `circle`
    /// three times slower than Pillow's).
    func apply(to pixels: inout [UInt8]) {
        let inset = (border?.width ?? 0) + 1
        pixels.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress else { return }
            for y in 0..<height {
                // A cancelled task stops here; its caller throws the pixels away (1.7 s at 49 MP
                // with a border, all of it after a 504 before this check).
                if y & 15 == 0, Task.isCancelled { return }
                let reach = span(row: y, margin: -1), untouched = span(row: y, margin: inset)
                let row = base + y * width * 4
                guard !reach.isEmpty else {
                    row.update(repeating: 0, count: width * 4)
                    continue
                }
                row.update(repeating: 0, count: reach.lowerBound * 4)
                (row + reach.upperBound * 4).update(repeating: 0, count: (width - reach.upperBound) * 4)
                for x in reach where !untouched.contains(x) { shade(p, x: x, y: y) }
            }
        }
    }

    /// The pixels of row `y` whose centres lie inside the shape shrunk by `margin` (grown, when
    /// negative), its corner radius changed by as much. With the border width + 1: full coverage,
    /// no border, left as they are. With −1: every pixel that can have any coverage.
    private func span(row y: Int, margin: Double) -> Range<Int> {
        let halfWidth = Double(width) / 2 - margin, halfHeight = Double(height) / 2 - margin
        let r = max(min(radius, min(Double(width), Double(height)) / 2) - margin, 0)
        let dy = abs(Double(y) + 0.5 - Double(height) / 2)
        guard halfWidth > 0, halfHeight > 0, dy <= halfHeight else { return 0..<0 }
        var extent = halfWidth
        if dy > halfHeight - r {
            let intoCorner = dy - (halfHeight - r)
            extent = halfWidth - r + max(r * r - intoCorner * intoCorner, 0).squareRoot()
        }
        let first = Int((Double(width) / 2 - extent - 0.5).rounded(.up)), last = Int((Double(width) / 2 + extent - 0.5).rounded(.down))
        return first <= last ? max(first, 0)..<min(last + 1, width) : 0..<0
    }

    private func shade(_ p: UnsafeMutableBufferPointer<UInt8>, x: Int, y: Int) {
        let px = Double(x) + 0.5, py = Double(y) + 0.5
        let outer = Self.coverage(px, py, left: 0, top: 0, right: Double(width), bottom: Double(height), radius: radius)
        var ring: Float = 0
        if let border {
            let inset = border.width
            let inner = inset * 2 < Double(min(width, height)) ? Self.coverage(
                px, py, left: inset, top: inset, right: Double(width) - inset, bottom: Double(height) - inset,
                radius: max(radius - inset, 0)) : 0
            ring = 1 - inner
        }
        guard outer < 1 || ring > 0 else { return }
        let i = (y * width + x) * 4
        var value = SIMD4(Float(p[i]), Float(p[i + 1]), Float(p[i + 2]), Float(p[i + 3]))
        if let border, ring > 0 { value = border.color * ring + value * (1 - border.alpha * ring) }
        let rounded = (value * outer + 0.5).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 255))
        p[i] = UInt8(rounded[0]); p[i + 1] = UInt8(rounded[1]); p[i + 2] = UInt8(rounded[2]); p[i + 3] = UInt8(rounded[3])
    }

    /// How much of the pixel centred at (x, y) the rounded rectangle covers, 0...1.
    static func coverage(_ x: Double, _ y: Double, left: Double, top: Double, right: Double, bottom: Double, radius: Double) -> Float {
        let halfWidth = (right - left) / 2, halfHeight = (bottom - top) / 2
        let r = min(radius, min(halfWidth, halfHeight))  // (the variadic min allocates)
        // Signed distance to a rounded box: positive outside, negative inside.
        let qx = abs(x - (left + halfWidth)) - (halfWidth - r), qy = abs(y - (top + halfHeight)) - (halfHeight - r)
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        let distance = outside + min(max(qx, qy), 0) - r
        return Float(min(max(0.5 - distance, 0), 1))
    }
}
