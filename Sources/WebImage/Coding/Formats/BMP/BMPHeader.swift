/// A device-independent bitmap's header (what follows the 14-byte `BM` file header in a BMP,
/// and starts each non-PNG entry of an ICO/CUR): size, depth, compression, channel masks and palette.
///
/// Reads every header size in use: `BITMAPCOREHEADER` (12 bytes, OS/2 1.x, 3-byte palette
/// entries), OS/2 2.x (16 and 64), `BITMAPINFOHEADER` (40, masks after it for BITFIELDS),
/// V2/V3 (52/56, masks inside), V4 (108) and V5 (124).
struct BMPHeader {
    enum Compression: UInt32 { case rgb = 0, rle8 = 1, rle4 = 2, bitfields = 3, alphaBitfields = 6 }

    struct ParseError: Error {
        var reason: String
        var isCancellation = false
        /// The task was cancelled while the pixels were read (``ImageDecodingError/cancelled``).
        static let cancelled = ParseError(reason: "cancelled", isCancellation: true)
    }

    var width: Int
    var height: Int
    /// Rows are stored top row first (negative height in the file).
    var topDown: Bool
    var bitCount: Int
    var compression: Compression
    /// Channel masks for 16- and 32-bit pixels (alpha 0 when there is none).
    var masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32) = (0, 0, 0, 0)
    /// Whether a BITFIELDS mask set the alpha channel explicitly.
    var hasAlphaMask: Bool { masks.alpha != 0 }
    /// Palette as straight RGBA8 entries (alpha 255).
    var palette: [UInt32] = []
    /// Where the header, masks and palette end.
    var end: Int

    /// - Parameters:
    ///   - offset: where the header starts in `bytes`.
    ///   - paletteEnd: where the palette must stop (the pixel data's offset), when known.
    ///   - readingPalette: `false` to measure the palette (``end``) without copying it: an ICO
    ///     directory walk reads the header of every entry, and 65,535 of them took seconds.
    init(_ bytes: UnsafeRawBufferPointer, at offset: Int, paletteEnd: Int? = nil, readingPalette: Bool = true) throws(ParseError) {
        func u32(_ o: Int) -> UInt32 { UInt32(bytes[offset + o]) | UInt32(bytes[offset + o + 1]) << 8 | UInt32(bytes[offset + o + 2]) << 16 | UInt32(bytes[offset + o + 3]) << 24 }
        func u16(_ o: Int) -> Int { Int(bytes[offset + o]) | Int(bytes[offset + o + 1]) << 8 }
        guard bytes.count - offset >= 12 else { throw ParseError(reason: "header truncated") }
        let size = Int(u32(0))
        guard [12, 16, 40, 52, 56, 64, 108, 124].contains(size) else { throw ParseError(reason: "unknown header size \(size)") }
        guard bytes.count - offset >= size else { throw ParseError(reason: "header truncated") }
        var entrySize = 4
        if size == 12 {
            width = u16(4)
            height = u16(6)
            topDown = false
            bitCount = u16(10)
            compression = .rgb
            entrySize = 3
        } else {
            width = Int(Int32(bitPattern: u32(4)))
            let signedHeight = Int(Int32(bitPattern: u32(8)))
            topDown = signedHeight < 0
            height = signedHeight.magnitude > Int(Int32.max) ? 0 : abs(signedHeight)
            bitCount = u16(14)
            let code = size >= 20 ? u32(16) : 0
            guard let compression = Compression(rawValue: code) else { throw ParseError(reason: "compression \(code) not supported") }
            self.compression = compression
        }
        guard width > 0, height > 0 else { throw ParseError(reason: "size \(width)×\(height)") }
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else { throw ParseError(reason: "\(bitCount) bits per pixel") }
        end = offset + size
        try readMasks(bytes, headerSize: size, u32: u32)
        let colorsUsed = size >= 36 ? Int(u32(32)) : 0
        if bitCount <= 8 {
            var count = colorsUsed == 0 || colorsUsed > 1 << bitCount ? 1 << bitCount : colorsUsed
            if let paletteEnd { count = min(count, max(0, (paletteEnd - end) / entrySize)) }
            count = min(count, max(0, (bytes.count - end) / entrySize))
            if readingPalette {
                palette = (0..<count).map { i in
                    let p = end + i * entrySize
                    return UInt32(bytes[p + 2]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p]) << 16 | 0xFF00_0000
                }
            }
            end += count * entrySize
        }
        try validateCompression()
    }

    private mutating func readMasks(_ bytes: UnsafeRawBufferPointer, headerSize size: Int, u32: (Int) -> UInt32) throws(ParseError) {
        switch (compression, bitCount) {
        case (.bitfields, _), (.alphaBitfields, _):
            let count = compression == .alphaBitfields ? 4 : 3
            if size >= 52 {
                masks = (u32(40), u32(44), u32(48), size >= 56 ? u32(52) : 0)
            } else {
                // BITMAPINFOHEADER: the masks follow the header.
                guard bytes.count - end >= count * 4 else { throw ParseError(reason: "masks truncated") }
                masks = (u32(size), u32(size + 4), u32(size + 8), count == 4 ? u32(size + 12) : 0)
                end += count * 4
            }
        case (.rgb, 16):
            masks = (0x7C00, 0x03E0, 0x001F, 0)
        case (.rgb, 24), (.rgb, 32):
            masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0)
        default:
            break
        }
    }

    private func validateCompression() throws(ParseError) {
        switch compression {
        case .rle8: guard bitCount == 8 else { throw ParseError(reason: "RLE8 needs 8 bits per pixel") }
        case .rle4: guard bitCount == 4 else { throw ParseError(reason: "RLE4 needs 4 bits per pixel") }
        case .bitfields, .alphaBitfields:
            guard bitCount == 16 || bitCount == 32 else { throw ParseError(reason: "BITFIELDS needs 16 or 32 bits per pixel") }
        case .rgb: break
        }
    }

    /// Bytes per stored row (rows are padded to 4 bytes).
    var stride: Int { ((width * bitCount + 31) / 32) * 4 }
}
