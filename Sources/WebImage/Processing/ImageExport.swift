public import Foundation

/// Turns a decoded image into a file to write: upright (EXIF orientation applied, since the new
/// file carries no tag), processed, fitted inside a box, and encoded — what `webimage fetch
/// --resize/--format` does with each image.
///
/// ```swift
/// let export = ImageExport(maxSize: (256, 256), format: .webp)
/// let image = try ImageCoderRegistry.default.decode(data, options: export.decodingOptions)
/// let (file, format) = try export.export(image)     // a WebP of at most 256 × 256
/// ```
public struct ImageExport: Sendable {
    /// The formats an export can write.
    public static let encodableFormats: [ImageFormat] = [.jpeg, .png, .webp, .gif, .avif, .apng]

    /// The box the result must fit in (aspect ratio kept, never enlarged); `nil` keeps the size.
    public var maxSize: (width: Int, height: Int)?
    /// The output format; `nil` keeps the source format when it can be encoded, else PNG.
    public var format: ImageFormat?
    /// Applied to the upright image before it is fitted in ``maxSize``.
    public var processors: [any ImageProcessing]
    /// Encoder quality for lossy formats (JPEG, lossy WebP, AVIF); lossless formats use 1.
    public var lossyQuality: Double

    public init(
        maxSize: (width: Int, height: Int)? = nil, format: ImageFormat? = nil,
        processors: [any ImageProcessing] = [], lossyQuality: Double = 0.85
    ) {
        self.maxSize = maxSize
        self.format = format
        self.processors = processors
        self.lossyQuality = lossyQuality
    }

    /// What to decode with: at most the box's longest side when there are no processors (JPEG
    /// and WebP then decode at reduced size), and one frame when the output format has no
    /// animation.
    public var decodingOptions: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        if processors.isEmpty { options.thumbnailMaxPixelSize = maxSize.map { max($0.width, $0.height) } }
        options.firstFrameOnly = format == .jpeg || format == .png
        return options
    }

    /// The format `image` will be written in.
    public func outputFormat(for image: Image) -> ImageFormat {
        format ?? (Self.encodableFormats.contains(image.format) ? image.format : .png)
    }

    /// The encoded file and its format. Throws ``ImageProcessingError`` from a processor, or the
    /// encoder's error.
    public func export(_ decoded: Image) throws -> (data: Data, format: ImageFormat) {
        let output = outputFormat(for: decoded)
        // `processed` turns the pixels upright first; without processors, `oriented` does.
        var image = processors.isEmpty ? decoded.oriented() : try decoded.processed(by: processors, animated: true)
        if let maxSize { image = image.resized(toFitWidth: maxSize.width, height: maxSize.height) }
        let quality = output == .jpeg || output == .webp || output == .avif ? lossyQuality : 1
        return (try ImageCoderRegistry.default.encode(image, as: output, quality: quality), output)
    }
}
