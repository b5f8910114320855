internal import CSpng
public import Foundation

extension PNGCoder: ProgressiveImageDecoding {
    public func canDecodeProgressively(_ format: ImageFormat) -> Bool { format == .png }

    /// The rows libspng's progressive API gets from the first bytes of a PNG. Interlaced
    /// images fill each Adam7 pixel's block (8×8 after the first pass, down to 1×1), so the
    /// whole picture appears coarse first and sharpens; plain ones show their top rows.
    ///
    /// ```swift
    /// let preview = PNGCoder().decodePartial(firstBytes, options: .default)
    /// ```
    public func decodePartial(_ data: Data, options: ImageDecodingOptions) -> Image? {
        try? Self.withDecoder(data) { ctx throws(ImageDecodingError) -> Image in
            let header = try Self.header(ctx)
            try options.checkPixelLimit(header)
            var ihdr = spng_ihdr()
            try Self.check(spng_get_ihdr(ctx, &ihdr))
            let width = header.pixelWidth, height = header.pixelHeight
            let flags = Int32(SPNG_DECODE_PROGRESSIVE.rawValue | SPNG_DECODE_TRNS.rawValue)
            try Self.check(spng_decode_image(ctx, nil, 0, Int32(SPNG_FMT_RGBA8.rawValue), flags))
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            var row = [UInt8](repeating: 0, count: width * 4)
            var rows = 0
            while true {
                var info = spng_row_info()
                guard spng_get_row_info(ctx, &info) == 0 else { break }
                let status = row.withUnsafeMutableBytes { spng_decode_row(ctx, $0.baseAddress, $0.count) }
                guard status == 0 || status == Int32(SPNG_EOI.rawValue) else { break }  // data ends here
                Self.place(row, y: Int(info.row_num), pass: ihdr.interlace_method == 0 ? nil : Int(info.pass), into: &pixels, width: width, height: height)
                rows += 1
                if status == Int32(SPNG_EOI.rawValue) { break }
            }
            guard rows > 0 else { throw .corrupt(format: .png, reason: "no complete row yet") }
            let isOpaque = PixelOperations.premultiply(&pixels)
            return Image(format: .png, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: isOpaque, scale: options.scale)
                .fittingThumbnail(options)
        }
    }

    /// Adam7 pass geometry: first column, column step, and the block each pixel stands for.
    private static let passes: [(x: Int, dx: Int, blockWidth: Int, blockHeight: Int)] = [
        (0, 8, 8, 8), (4, 8, 4, 8), (0, 4, 4, 4), (2, 4, 2, 4), (0, 2, 2, 2), (1, 2, 1, 2), (0, 1, 1, 1),
    ]

    /// Copies a decoded row into the image: whole for plain PNGs, as blocks for a pass.
    private static func place(_ row: [UInt8], y: Int, pass: Int?, into pixels: inout [UInt8], width: Int, height: Int) {
        guard y < height else { return }
        guard let pass, pass < passes.count else {
            pixels.replaceSubrange(y * width * 4..<(y + 1) * width * 4, with: row)
            return
        }
        let geometry = passes[pass]
        for x in stride(from: geometry.x, to: width, by: geometry.dx) {
            for by in y..<min(y + geometry.blockHeight, height) {
                for bx in x..<min(x + geometry.blockWidth, width) {
                    let o = (by * width + bx) * 4, s = x * 4
                    pixels[o] = row[s]; pixels[o + 1] = row[s + 1]; pixels[o + 2] = row[s + 2]; pixels[o + 3] = row[s + 3]
                }
            }
        }
    }
}
