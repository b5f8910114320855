/// Pixel-format conversions shared by the coders (RGBA8, see ``Image``).
enum PixelOperations {
    /// Premultiplies straight-alpha RGBA8 in place; returns `true` if every pixel was opaque.
    ///
    /// Colour becomes (c · a + 127) / 255 with exact rounding, computed without division as
    /// (t + t >> 8) >> 8 with t = c · a + 128. Four pixels at a time in 16-bit lanes (alpha's own
    /// lane is multiplied by 255, which the same formula returns unchanged); blocks of four
    /// opaque pixels are skipped.
    static func premultiply(_ pixels: inout [UInt8]) -> Bool {
        pixels.withUnsafeMutableBytes { premultiply($0) }
    }

    /// Bytes premultiplied between looks at `Task.isCancelled` by `premultiplyStoppable` (and
    /// copied out between looks by the WebP compositor): a 49 MP image is 750 bands; one band of
    /// alpha below 255 takes 30 ms in a debug build.
    static let band = 1 << 18

    /// `premultiply` over a whole decoded image a band at a time, `.cancelled`
    /// between bands: the last step of a still's decode, after its own stoppable rows, stops
    /// within one band of a cancel too, where one call is a single pass over all of a 49 MP
    /// image's 196 MB.
    static func premultiplyStoppable(_ pixels: inout [UInt8]) throws(ImageDecodingError) -> Bool {
        let result = pixels.withUnsafeMutableBytes { raw in
            Result { () throws(ImageDecodingError) in try premultiplyStoppable(raw) }
        }
        return try result.get()
    }

    /// The same, in place in a buffer a decoder wrote.
    static func premultiplyStoppable(_ raw: UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Bool {
        var opaque = true
        for start in stride(from: 0, to: raw.count, by: band) {
            if Task.isCancelled { throw .cancelled }
            if !premultiply(UnsafeMutableRawBufferPointer(rebasing: raw[start..<min(raw.count, start + band)])) { opaque = false }
        }
        return opaque
    }

    /// The same, in place in a buffer a decoder wrote (no array in between).
    static func premultiply(_ raw: UnsafeMutableRawBufferPointer) -> Bool {
        var opaque = true
        var i = 0
        while i + 16 <= raw.count {
            let v = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            if v[3] & v[7] & v[11] & v[15] != 255 {
                opaque = false
                let (a0, a1, a2, a3) = (UInt16(v[3]), UInt16(v[7]), UInt16(v[11]), UInt16(v[15]))
                let a = SIMD16<UInt16>(a0, a0, a0, 255, a1, a1, a1, 255, a2, a2, a2, 255, a3, a3, a3, 255)
                let t = SIMD16<UInt16>(truncatingIfNeeded: v) &* a &+ 128
                raw.storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: (t &+ (t &>> 8)) &>> 8), toByteOffset: i, as: SIMD16<UInt8>.self)
            }
            i += 16
        }
        while i + 3 < raw.count {  // fewer than four pixels left
            let a = UInt32(raw[i + 3])
            if a != 255 {
                opaque = false
                for c in 0..<3 {
                    let t = UInt32(raw[i + c]) * a + 128
                    raw[i + c] = UInt8((t + (t >> 8)) >> 8)
                }
            }
            i += 4
        }
        return opaque
    }

    /// Straight-alpha RGBA8 copy of a premultiplied image, rows packed.
    static func unpremultiplied(_ image: Image) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.pixelWidth * image.pixelHeight * 4)
        unpremultiply(image, into: &out, rows: 0..<image.pixelHeight)
        return out
    }

    /// ``unpremultiplied(_:)`` for an encoder: it looks at `Task.isCancelled` every ``band``
    /// bytes of rows (a debug server took a few tenths of a second for 9 MP after its deadline).
    static func unpremultipliedStoppable(_ image: Image) throws(ImageEncodingError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.pixelWidth * image.pixelHeight * 4)
        try inBatches(image) { rows in unpremultiply(image, into: &out, rows: rows) }
        return out
    }

    /// Packed RGB8 copy (alpha dropped) for opaque images, looking at `Task.isCancelled` as
    /// ``unpremultipliedStoppable(_:)`` does.
    static func dropAlphaStoppable(_ image: Image) throws(ImageEncodingError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.pixelWidth * image.pixelHeight * 3)
        try inBatches(image) { rows in
            image.pixels.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    var d = rows.lowerBound * image.pixelWidth * 3
                    for y in rows {
                        var s = y * image.bytesPerRow
                        for _ in 0..<image.pixelWidth {
                            dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                            d += 3; s += 4
                        }
                    }
                }
            }
        }
        return out
    }

    /// `body` over the image's rows in batches of about ``band`` bytes, with a look at
    /// `Task.isCancelled` before each.
    private static func inBatches(_ image: Image, _ body: (Range<Int>) -> Void) throws(ImageEncodingError) {
        guard inRowBatches(rows: image.pixelHeight, bytesPerRow: image.bytesPerRow, body) else { throw .cancelled }
    }

    /// `body` over rows `0..<rows` in batches of about ``band`` bytes, looking at
    /// `Task.isCancelled` before each: `false` when it stopped there, the rows after unvisited.
    /// The one way every whole-image pass (encoders' copies, processors' loops) stops within a
    /// band of a deadline.
    static func inRowBatches(rows: Int, bytesPerRow: Int, _ body: (Range<Int>) -> Void) -> Bool {
        let batch = max(1, band / max(bytesPerRow, 1))
        var y = 0
        while y < rows {
            if Task.isCancelled { return false }
            let end = min(rows, y + batch)
            body(y..<end)
            y = end
        }
        return true
    }

    private static func unpremultiply(_ image: Image, into out: inout [UInt8], rows: Range<Int>) {
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in rows {
                    for x in 0..<image.pixelWidth {
                        let s = y * image.bytesPerRow + x * 4, d = (y * image.pixelWidth + x) * 4
                        let a = UInt32(src[s + 3])
                        dst[d + 3] = src[s + 3]
                        for c in 0..<3 {
                            dst[d + c] = a == 0 ? 0 : UInt8(min(255, (UInt32(src[s + c]) * 255 + a / 2) / a))
                        }
                    }
                }
            }
        }
    }
}

extension PixelOperations {
    /// The alpha byte of an RGBA8 pixel loaded as one `UInt32` (in memory order, either endianness).
    static let alphaMask = UInt32(0xFF).bigEndian

    /// `true` when every alpha byte of packed RGBA8 is 255.
    static func isOpaque(_ pixels: [UInt8]) -> Bool {
        pixels.withUnsafeBytes { raw in
            // AND whole pixels together in blocks (a loop the compiler vectorises), leaving early
            // after the first block with a translucent pixel.
            let count = raw.count / 4
            var start = 0
            while start < count {
                let end = min(start + 4096, count)
                var all = UInt32.max
                for i in start..<end { all &= raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self) }
                if all & alphaMask != alphaMask { return false }
                start = end
            }
            return true
        }
    }
}

extension PixelOperations {
    /// Converts Adobe-inverted CMYK (as stored by Photoshop, 0 = full ink) to opaque RGBA in
    /// place, as browsers do: R = C·K/255, G = M·K/255, B = Y·K/255.
    static func convertInvertedCMYK(_ pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i + 3 < p.count {
                let k = UInt32(p[i + 3])
                for c in 0..<3 {
                    let t = UInt32(p[i + c]) * k + 128
                    p[i + c] = UInt8((t + (t >> 8)) >> 8)
                }
                p[i + 3] = 255
                i += 4
            }
        }
    }
}
