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

    /// The memory ``export(_:)`` takes for `decoded` beyond the image itself, in bytes: the
    /// upright (or processed) copy, the fitted copy, and the encoder's own buffers
    /// (``ImageFormat/encodingBytesPerPixel``), over every frame kept; `Int.max` when that
    /// overflows. A caller holding a memory budget reserves it before exporting.
    ///
    /// ```swift
    /// let reservation = try await budget.reserve(export.memoryBytes(toExport: image), waitingAtMost: .seconds(30))
    /// defer { reservation.release() }
    /// let (file, format) = try export.export(image)
    /// ```
    public func memoryBytes(toExport decoded: Image) -> Int {
        let output = outputFormat(for: decoded)
        var (width, height) = (max(decoded.pixelWidth, 0), max(decoded.pixelHeight, 0))
        if let maxSize, width > 0, height > 0 {
            let scale = min(1, Double(maxSize.width) / Double(width), Double(maxSize.height) / Double(height))
            (width, height) = (max(1, Int(Double(width) * scale)), max(1, Int(Double(height) * scale)))
        }
        let frames = max(decoded.frames.count, 1)
        let source = decoded.pixelWidth.multipliedReportingOverflow(by: decoded.pixelHeight)
        let fitted = width.multipliedReportingOverflow(by: height)
        // The upright or processed copy at the source's size; the fitted copy (when fitting) and
        // the encoder's buffers at the output's.
        let perFrame = source.partialValue.multipliedReportingOverflow(by: 4)
        let encoded = fitted.partialValue.multipliedReportingOverflow(by: (maxSize == nil ? 0 : 4) + output.encodingBytesPerPixel)
        let sum = perFrame.partialValue.addingReportingOverflow(encoded.partialValue)
        let total = sum.partialValue.multipliedReportingOverflow(by: frames)
        let overflow = source.overflow || fitted.overflow || perFrame.overflow || encoded.overflow || sum.overflow || total.overflow
        return overflow || total.partialValue < 0 ? .max : total.partialValue
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
