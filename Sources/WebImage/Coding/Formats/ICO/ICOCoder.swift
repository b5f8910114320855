public import Foundation

/// ICO and CUR decoding, in Swift: one entry of the icon, as an image.
///
/// Without a thumbnail size the largest entry is decoded (deepest colour on ties), as
/// SDWebImage and browsers pick it. With ``ImageDecodingOptions/thumbnailMaxPixelSize`` the
/// smallest entry at least that large is decoded (the largest when none is), then fitted.
/// Entries are PNG (decoded by ``PNGCoder``) or bitmaps without a file header (`BMPHeader`,
/// height doubled), whose AND mask makes pixels transparent unless 32-bit pixels carry alpha.
/// Sizes come from each entry's own header, checked against
/// ``ImageDecodingOptions/maxPixelCount`` before any pixel buffer exists. The entries are
/// alternatives, not frames: the image has one frame.
///
/// ```swift
/// let favicon = try ICOCoder().decode(data, options: ImageDecodingOptions(thumbnailMaxPixelSize: 32))
/// ```
public struct ICOCoder: ImageDecoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .ico }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        let entry = try Self.withDirectory(data) { _, directory in directory.preferred(size: nil) }
        return ImageHeader(format: .ico, pixelWidth: entry.width, pixelHeight: entry.height, hasAlpha: true)
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try Self.withDirectory(data) { bytes, directory throws(ImageDecodingError) in
            let entry = directory.preferred(size: options.thumbnailMaxPixelSize)
            try options.checkPixelLimit(ImageHeader(format: .ico, pixelWidth: entry.width, pixelHeight: entry.height, hasAlpha: true))
            var image: Image
            if entry.isPNG {
                var entryOptions = options
                entryOptions.thumbnailMaxPixelSize = nil
                image = try PNGCoder().decode(Data(bytes[entry.range]), options: entryOptions)
                image.format = .ico
            } else {
                var pixels = try BMPCoder.mapped(.ico) { () throws(BMPHeader.ParseError) in
                    try Self.bitmap(UnsafeRawBufferPointer(rebasing: bytes[entry.range]))
                }
                let isOpaque = try PixelOperations.premultiplyStoppable(&pixels)
                image = Image(
                    format: .ico, pixelWidth: entry.width, pixelHeight: entry.height, pixels: pixels, isOpaque: isOpaque,
                    scale: options.scale)
            }
            var fitted = image.fittingThumbnail(options)
            if entry.sizeIgnored {
                fitted.repairs.formUnion(try options.allow(.damagedMetadata, in: .ico, "a directory entry's size is smaller than its image"))
            }
            return fitted
        }
    }

    // MARK: - Internals

    private static func withDirectory<T>(
        _ data: Data, _ body: (UnsafeRawBufferPointer, ICODirectory) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        let result = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                let directory: ICODirectory
                do throws(ICODirectory.ParseError) { directory = try ICODirectory(bytes) } catch {
                    throw .corrupt(format: .ico, reason: error.reason)
                }
                return .success(try body(bytes, directory))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// A bitmap entry: XOR pixels (half the stored height), then the AND mask unless alpha was used.
    private static func bitmap(_ entry: UnsafeRawBufferPointer) throws(BMPHeader.ParseError) -> [UInt8] {
        var header = try BMPHeader(entry, at: 0)
        header.height /= 2
        guard header.height > 0 else { throw BMPHeader.ParseError(reason: "empty icon") }
        var (pixels, hasAlpha) = try BMPPixels.rows(entry, header: header, at: header.end)
        guard !hasAlpha else { return pixels }
        let width = header.width, height = header.height
        let maskStart = header.end + header.stride * height, maskStride = (width + 31) / 32 * 4
        // A missing or short mask leaves the icon opaque.
        guard maskStart <= entry.count, entry.count - maskStart >= maskStride * height else { return pixels }
        for row in 0..<height {
            let source = maskStart + (height - 1 - row) * maskStride
            for x in 0..<width where entry[source + x / 8] & (0x80 >> UInt8(x % 8)) != 0 {
                let o = (row * width + x) * 4
                pixels[o] = 0; pixels[o + 1] = 0; pixels[o + 2] = 0; pixels[o + 3] = 0
            }
        }
        return pixels
    }
}
