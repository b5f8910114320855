/// RLE8 and RLE4 bitmaps: runs of one index (RLE4: two alternating), absolute runs, end of
/// line, delta moves and end of bitmap.
///
/// Pixels the runs never reach (skipped by a delta or an early end of line or bitmap) stay
/// transparent, as in browsers. Data that ends before the end-of-bitmap marker while rows are
/// still missing is truncated and refused.
enum BMPRunLength {
    static func decode(
        _ bytes: UnsafeRawBufferPointer, header: BMPHeader, at offset: Int
    ) throws(BMPHeader.ParseError) -> (pixels: [UInt8], hasAlpha: Bool) {
        let width = header.width, height = header.height, four = header.compression == .rle4
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        var written = 0
        var x = 0, y = 0, i = offset
        var finished = false, stopped = false
        guard offset >= 0 else { throw BMPHeader.ParseError(reason: "pixel data truncated") }
        pixels.withUnsafeMutableBytes { out in
            func put(_ index: Int) {
                if x < width, y < height {
                    let row = header.topDown ? y : height - 1 - y
                    let color = index < header.palette.count ? header.palette[index] : 0xFF00_0000
                    out.storeBytes(of: color.littleEndian, toByteOffset: (row * width + x) * 4, as: UInt32.self)
                    written += 1
                }
                x += 1
            }
            var codes = 0
            while i + 1 < bytes.count, y < height {
                // A cancelled task stops within 64 K codes (128 KB of the file).
                codes &+= 1
                if codes & 0xFFFF == 0, Task.isCancelled {
                    stopped = true
                    return
                }
                let count = Int(bytes[i]), code = Int(bytes[i + 1])
                i += 2
                if count > 0 {
                    // Only the pixels inside the row cost work: a run past its end (a 1-pixel-wide
                    // bitmap of 255-pixel runs) moves x at once; x grows at most 255 per 2 bytes.
                    let visible = x < width ? min(count, width - x) : 0
                    for k in 0..<visible { put(four ? (k % 2 == 0 ? code >> 4 : code & 15) : code) }
                    x += count - visible
                    continue
                }
                switch code {
                case 0: x = 0; y += 1
                case 1: finished = true; return
                case 2:
                    guard i + 1 < bytes.count else { return }
                    x += Int(bytes[i]); y += Int(bytes[i + 1])
                    i += 2
                default:
                    let length = four ? (code + 1) / 2 : code
                    guard bytes.count - i >= length else { i = bytes.count; return }
                    let visible = x < width ? min(code, width - x) : 0
                    for k in 0..<visible {
                        let byte = Int(bytes[i + (four ? k / 2 : k)])
                        put(four ? (k % 2 == 0 ? byte >> 4 : byte & 15) : byte)
                    }
                    x += code - visible
                    i += length + (length & 1)
                }
            }
            if y >= height { finished = true }
        }
        if stopped { throw .cancelled }
        guard finished else { throw BMPHeader.ParseError(reason: "RLE data truncated") }
        return (pixels, written < width * height || !PixelOperations.isOpaque(pixels))
    }
}
