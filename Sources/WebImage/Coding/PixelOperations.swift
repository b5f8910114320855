/// Pixel-format conversions shared by the coders (RGBA8, see ``Image``).
enum PixelOperations {
    /// Premultiplies straight-alpha RGBA8 in place; returns `true` if every pixel was opaque.
    static func premultiply(_ pixels: inout [UInt8]) -> Bool {
        var opaque = true
        pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i + 3 < p.count {
                let a = UInt32(p[i + 3])
                if a != 255 {
                    opaque = false
                    // (c * a + 127) / 255, exact rounding without division.
                    for c in 0..<3 {
                        let t = UInt32(p[i + c]) * a + 128
                        p[i + c] = UInt8((t + (t >> 8)) >> 8)
                    }
                }
                i += 4
            }
        }
        return opaque
    }

    /// Straight-alpha RGBA8 copy of a premultiplied image, rows packed.
    static func unpremultiplied(_ image: Image) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.pixelWidth * image.pixelHeight * 4)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<image.pixelHeight {
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
        return out
    }

    /// Packed RGB8 copy (alpha dropped) for opaque images.
    static func dropAlpha(_ image: Image) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.pixelWidth * image.pixelHeight * 3)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var d = 0
                for y in 0..<image.pixelHeight {
                    var s = y * image.bytesPerRow
                    for _ in 0..<image.pixelWidth {
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                        d += 3; s += 4
                    }
                }
            }
        }
        return out
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
