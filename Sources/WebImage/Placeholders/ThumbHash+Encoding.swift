import Foundation

extension ThumbHash {
    /// The largest side ThumbHash hashes (its format's limit); ``Image/thumbHash()`` scales down
    /// to it first.
    public static let maxEncodedSide = 100

    /// Hashes straight-alpha (not premultiplied) RGBA8 pixels, `width × height` each at most
    /// ``maxEncodedSide``; `rgba` must hold `4 × width × height` bytes.
    ///
    /// Colours are composited over the average colour and split into luminance, yellow–blue,
    /// red–green and alpha (LPQA); each channel keeps a triangle of its lowest DCT components,
    /// normalised by the largest and quantised to 4 bits.
    ///
    /// ```swift
    /// let hash = try ThumbHash(rgba: pixels, width: 100, height: 75)
    /// print(hash.base64String)
    /// ```
    public init(rgba: [UInt8], width w: Int, height h: Int) throws(PlaceholderError) {
        guard w > 0, h > 0 else { throw .emptyImage }
        guard w <= Self.maxEncodedSide, h <= Self.maxEncodedSide, rgba.count >= w * h * 4 else {
            throw .invalidSize(width: w, height: h, limit: Self.maxEncodedSide)
        }
        let count = w * h
        var average = SIMD3<Double>(repeating: 0), totalAlpha = 0.0
        for i in 0..<count {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let weight: Double = alpha / 255
            let color = SIMD3<Double>(Double(rgba[i * 4]), Double(rgba[i * 4 + 1]), Double(rgba[i * 4 + 2]))
            average += weight * color
            totalAlpha += alpha
        }
        if totalAlpha > 0 { average /= totalAlpha }
        let hasAlpha = totalAlpha < Double(count)
        let limit = Double(hasAlpha ? 5 : 7), longSide = Double(max(w, h))
        let lx = max(1, Int(Self.round(limit * Double(w) / longSide)))
        let ly = max(1, Int(Self.round(limit * Double(h) / longSide)))
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let weight: Double = alpha / 255, rest: Double = 1 - alpha
            let r: Double = average[0] * rest + weight * Double(rgba[i * 4])
            let g: Double = average[1] * rest + weight * Double(rgba[i * 4 + 1])
            let b: Double = average[2] * rest + weight * Double(rgba[i * 4 + 2])
            (l[i], p[i], q[i], a[i]) = ((r + g + b) / 3, (r + g) / 2 - b, r - g, alpha)
        }
        let lChannel = Self.encodeChannel(l, w, h, max(3, lx), max(3, ly))
        let pChannel = Self.encodeChannel(p, w, h, 3, 3), qChannel = Self.encodeChannel(q, w, h, 3, 3)
        let aChannel = hasAlpha ? Self.encodeChannel(a, w, h, 5, 5) : nil

        let isLandscape = w > h
        var header24: Int = Self.quantise(63 * lChannel.dc, bits: 6)
        header24 |= Self.quantise(31.5 + 31.5 * pChannel.dc, bits: 6) << 6
        header24 |= Self.quantise(31.5 + 31.5 * qChannel.dc, bits: 6) << 12
        header24 |= Self.quantise(31 * lChannel.scale, bits: 5) << 18
        if hasAlpha { header24 |= 1 << 23 }
        var header16: Int = isLandscape ? ly : lx
        header16 |= Self.quantise(63 * pChannel.scale, bits: 6) << 3
        header16 |= Self.quantise(63 * qChannel.scale, bits: 6) << 9
        if isLandscape { header16 |= 1 << 15 }
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16 & 255),
                             UInt8(header16 & 255), UInt8(header16 >> 8 & 255)]
        if let aChannel {
            hash.append(UInt8(Self.quantise(15 * aChannel.dc, bits: 4) | Self.quantise(15 * aChannel.scale, bits: 4) << 4))
        }
        let factors = lChannel.ac + pChannel.ac + qChannel.ac + (aChannel?.ac ?? [])
        for (index, factor) in factors.enumerated() {
            if index % 2 == 0 { hash.append(0) }
            hash[hash.count - 1] |= UInt8(Self.quantise(15 * factor, bits: 4)) << (index % 2 * 4)
        }
        try self.init(bytes: hash)
    }

    /// JavaScript's `Math.round` for the non-negative values quantised here: halves go up.
    static func round(_ value: Double) -> Double { value.rounded(.toNearestOrAwayFromZero) }

    /// `value` rounded as ``round(_:)`` does, clamped to a field of `bits` bits.
    static func quantise(_ value: Double, bits: Int) -> Int {
        Int(max(0, min(Double((1 << bits) - 1), round(value))))
    }

    /// One channel's DC term, its AC terms mapped to 0…1 by the largest magnitude, and that magnitude.
    static func encodeChannel(_ channel: [Double], _ w: Int, _ h: Int, _ nx: Int, _ ny: Int)
        -> (dc: Double, ac: [Double], scale: Double)
    {
        var dc = 0.0, ac: [Double] = [], scale = 0.0
        for (cx, cy) in acIndices(nx, ny) {
            let fx = (0..<w).map { cos(Double.pi / Double(w) * Double(cx) * (Double($0) + 0.5)) }
            var f = 0.0
            for y in 0..<h {
                let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
            }
            f /= Double(w * h)
            if cx > 0 || cy > 0 {
                ac.append(f)
                scale = max(scale, abs(f))
            } else {
                dc = f
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }
}
