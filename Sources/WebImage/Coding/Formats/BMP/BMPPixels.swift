/// Unpacks a bitmap's stored rows into straight RGBA8, top row first.
///
/// Palette images (1/2/4/8 bits, an index past the palette is opaque black), 16- and 32-bit
/// pixels through channel masks (a channel of n bits is scaled to 8 as v · 255 / (2ⁿ − 1), rounded),
/// 24-bit BGR, and RLE4/RLE8 (``BMPRunLength``). A 32-bit bitmap without an alpha mask keeps its
/// fourth byte as alpha unless every one is 0, as browsers do; ``BMPPixels/rows(_:header:at:)``
/// reports whether alpha was used.
enum BMPPixels {
    struct Channel {
        let mask: UInt32, shift: UInt32, maximum: UInt32

        init(_ mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            maximum = mask == 0 ? 0 : mask >> shift
        }

        @inline(__always) func value(_ pixel: UInt32, absent: UInt32) -> UInt32 {
            guard maximum != 0 else { return absent }
            let v = (pixel & mask) >> shift
            guard maximum != 255 else { return v }
            // Masks come from the file and need not be contiguous: `maximum` can reach 2³² − 1.
            return UInt32((UInt64(v) * 255 + UInt64(maximum / 2)) / UInt64(maximum))
        }
    }

    /// The decoded pixels and whether any of them is not opaque.
    static func rows(
        _ bytes: UnsafeRawBufferPointer, header: BMPHeader, at offset: Int
    ) throws(BMPHeader.ParseError) -> (pixels: [UInt8], hasAlpha: Bool) {
        if header.compression == .rle4 || header.compression == .rle8 {
            return try BMPRunLength.decode(bytes, header: header, at: offset)
        }
        let width = header.width, height = header.height, rowStride = header.stride
        let (rows, overflow) = rowStride.multipliedReportingOverflow(by: height - 1)
        let needed = rows &+ (width * header.bitCount + 7) / 8
        guard !overflow, needed >= rows, offset >= 0, offset <= bytes.count, bytes.count - offset >= needed else {
            throw BMPHeader.ParseError(reason: "pixel data truncated")
        }
        let readsAlpha = header.hasAlphaMask || (header.bitCount == 32 && header.compression == .rgb)
        let channels = [header.masks.red, header.masks.green, header.masks.blue,
                        header.hasAlphaMask ? header.masks.alpha : (readsAlpha ? 0xFF00_0000 : 0)].map(Channel.init)
        // Palette lookups go through a full 256-entry table: indices past the palette are opaque black.
        let table = (0..<256).map { ($0 < header.palette.count ? header.palette[$0] : 0xFF00_0000).littleEndian }
        var alphaSeen: UInt32 = 0
        var stopped = false
        // Every pixel of every row is written below (or, cancelled, none counts as written).
        var pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
            count = width * height * 4
            let out = UnsafeMutableRawPointer(buffer.baseAddress!)
            let src = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            table.withUnsafeBufferPointer { table in
                for row in 0..<height {
                    // A cancelled task stops within 16 rows (a 36 MP 1-bit file: 2.3 s in a debug build).
                    if row & 15 == 0, Task.isCancelled {
                        (stopped, count) = (true, 0)
                        return
                    }
                    let s = src + offset + (header.topDown ? row : height - 1 - row) * rowStride
                    let o = out + row * width * 4
                    switch header.bitCount {
                    case 1, 2, 4:
                        let bits = header.bitCount, perByte = 8 / bits, low = UInt8((1 << bits) - 1)
                        for x in 0..<width {
                            let shift = UInt8(8 - bits - (x % perByte) * bits)
                            let index = Int(s[x / perByte] >> shift & low)
                            o.storeBytes(of: table[index], toByteOffset: x * 4, as: UInt32.self)
                        }
                    case 8:
                        for x in 0..<width { o.storeBytes(of: table[Int(s[x])], toByteOffset: x * 4, as: UInt32.self) }
                    case 24:
                        // Four pixels at a time: 16 bytes loaded, BGR turned into RGBA by one shuffle
                        // (the last 4 bytes are read but not used, so stop 6 pixels before the end).
                        var x = 0
                        while x + 6 <= width {
                            let v = UnsafeRawPointer(s + x * 3).loadUnaligned(as: SIMD16<UInt8>.self)
                            let rgba = SIMD16<UInt8>(
                                v[2], v[1], v[0], 255, v[5], v[4], v[3], 255, v[8], v[7], v[6], 255, v[11], v[10], v[9], 255)
                            o.storeBytes(of: rgba, toByteOffset: x * 4, as: SIMD16<UInt8>.self)
                            x += 4
                        }
                        for x in x..<width {
                            let p = s + x * 3
                            let v = UInt32(p[2]) | UInt32(p[1]) << 8 | UInt32(p[0]) << 16 | 0xFF00_0000
                            o.storeBytes(of: v.littleEndian, toByteOffset: x * 4, as: UInt32.self)
                        }
                    default:
                        let size = header.bitCount / 8
                        for x in 0..<width {
                            let p = s + x * size
                            var pixel = UInt32(p[0]) | UInt32(p[1]) << 8
                            if size == 4 { pixel |= UInt32(p[2]) << 16 | UInt32(p[3]) << 24 }
                            let alpha = channels[3].value(pixel, absent: 255)
                            alphaSeen |= alpha
                            let v = channels[0].value(pixel, absent: 0) | channels[1].value(pixel, absent: 0) << 8
                                | channels[2].value(pixel, absent: 0) << 16 | alpha << 24
                            o.storeBytes(of: v.littleEndian, toByteOffset: x * 4, as: UInt32.self)
                        }
                    }
                }
            }
        }
        if stopped { throw .cancelled }
        guard readsAlpha else { return (pixels, false) }
        if alphaSeen == 0 {
            // Every alpha byte is 0: the fourth byte is padding, the image is opaque.
            for i in stride(from: 3, to: pixels.count, by: 4) { pixels[i] = 255 }
            return (pixels, false)
        }
        return (pixels, true)
    }
}
