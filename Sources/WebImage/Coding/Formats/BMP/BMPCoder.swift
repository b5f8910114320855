public import Foundation

/// BMP decoding, in Swift.
///
/// Reads every header in use (`BMPHeader`): 1/2/4/8-bit palettes, 16-bit (5-5-5 by default,
/// any BITFIELDS masks such as 5-6-5), 24-bit, 32-bit (BITFIELDS, alpha when a mask or the
/// pixels give one), RLE4 and RLE8, rows stored bottom-up (the usual case) or top-down
/// (negative height). The size comes from the header and is checked against
/// ``ImageDecodingOptions/maxPixelCount`` before any pixel buffer exists; pixel data that ends
/// early is refused with ``ImageDecodingError/corrupt(format:reason:)``. JPEG- and PNG-compressed
/// BMPs (printer formats) are refused too.
///
/// ```swift
/// let image = try BMPCoder().decode(data, options: .default)
/// ```
public struct BMPCoder: ImageDecoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .bmp }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.parse(data) { _, header, _, _ throws(ImageDecodingError) in Self.imageHeader(header, format: .bmp) }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try Self.parse(data) { bytes, header, pixelOffset, repairs throws(ImageDecodingError) in
            try options.checkPixelLimit(Self.imageHeader(header, format: .bmp))
            let allowed = try options.allow(repairs, in: .bmp, "the pixel data offset points at the palette")
            var (pixels, hasAlpha) = try Self.mapped(.bmp) { () throws(BMPHeader.ParseError) in
                try BMPPixels.rows(bytes, header: header, at: pixelOffset)
            }
            // Only pixels with alpha from the file need premultiplying (RLE gaps are already 0).
            let isOpaque = try hasAlpha ? PixelOperations.premultiplyStoppable(&pixels) : true
            var image = Image(
                format: .bmp, pixelWidth: header.width, pixelHeight: header.height, pixels: pixels, isOpaque: isOpaque,
                scale: options.scale
            ).fittingThumbnail(options)
            image.repairs = allowed
            return image
        }
    }

    // MARK: - Internals

    /// Reads the 14-byte file header and the DIB header behind it; `body` gets the bytes, the
    /// header, where the pixels start and what was forgiven. A palette image whose pixel offset
    /// points just past the DIB header, at its palette (a writer that forgot the palette when
    /// computing it), has its pixels after the palette, as Pillow reads it (`damagedMetadata`).
    private static func parse<T>(
        _ data: Data, _ body: (UnsafeRawBufferPointer, BMPHeader, Int, ImageRepairs) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        let result = data.withUnsafeBytes { bytes -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                guard bytes.count >= 26, bytes[0] == UInt8(ascii: "B"), bytes[1] == UInt8(ascii: "M") else {
                    throw .corrupt(format: .bmp, reason: "no BMP file header")
                }
                let pixelOffset = Int(bytes[10]) | Int(bytes[11]) << 8 | Int(bytes[12]) << 16 | Int(bytes[13]) << 24
                let header = try mapped(.bmp) { () throws(BMPHeader.ParseError) in try BMPHeader(bytes, at: 14, paletteEnd: pixelOffset) }
                if header.bitCount <= 8, header.palette.isEmpty, pixelOffset == header.end,
                   let full = try? BMPHeader(bytes, at: 14), !full.palette.isEmpty {
                    return .success(try body(bytes, full, full.end, .damagedMetadata))
                }
                return .success(try body(bytes, header, pixelOffset, []))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func imageHeader(_ header: BMPHeader, format: ImageFormat) -> ImageHeader {
        let alpha = header.bitCount == 32 || header.compression == .rle4 || header.compression == .rle8
        return ImageHeader(format: format, pixelWidth: header.width, pixelHeight: header.height, hasAlpha: alpha)
    }

    /// Runs `body`, turning a parse failure into ``ImageDecodingError/corrupt(format:reason:)``.
    static func mapped<T>(_ format: ImageFormat, _ body: () throws(BMPHeader.ParseError) -> T) throws(ImageDecodingError) -> T {
        do { return try body() } catch { throw error.isCancellation ? .cancelled : .corrupt(format: format, reason: error.reason) }
    }
}
