/// The built-in processors. Each is a small `Hashable` value whose ``ImageProcessing/identifier``
/// names every parameter; create them through the static helpers on ``ImageProcessing``:
///
/// ```swift
/// let avatar = try image.processed(by: [.resize(width: 96, height: 96, mode: .fill), .circle()])
/// let banner = try image.processed(by: [.crop(x: 0, y: 40, width: 1200, height: 300), .gaussianBlur(radius: 4)])
/// ```
///
/// Every processor works on premultiplied RGBA8 (see ``Image``) and returns a still image with
/// packed rows (`bytesPerRow == 4 * pixelWidth`); ``Image/processed(by:animated:)`` applies them
/// frame by frame to animations. Bad parameters throw ``ImageProcessingError``, never trap.
public enum ImageProcessors {
    /// The largest result, in pixels, a processor may produce (the decoders' default limit):
    /// an upscale or a rotation past it throws ``ImageProcessingError/tooLarge(width:height:)``.
    /// An animation processed frame by frame counts all its frames, as a decode does.
    public static let maxPixelCount = 50_000_000

    /// The size `processors` give a `width × height` image, from each step's
    /// ``ImageProcessing/outputSize(width:height:)``: no pixel is touched.
    static func outputSize(of processors: [any ImageProcessing], width: Int, height: Int) -> (width: Int, height: Int) {
        processors.reduce((width: width, height: height)) { size, processor in processor.outputSize(width: size.width, height: size.height) }
    }

    /// Throws ``ImageProcessingError/tooLarge(width:height:)`` when `frames` frames of `size`
    /// pass ``maxPixelCount``: the check every processed animation passes before its first frame
    /// is processed (a 20-frame GIF enlarged to 7000 × 7000 would be 980 MP).
    static func checkAnimation(_ size: (width: Int, height: Int), frames: Int) throws(ImageProcessingError) {
        let (perFrame, overflow) = max(size.width, 0).multipliedReportingOverflow(by: max(size.height, 0))
        guard !overflow, perFrame <= maxPixelCount / max(frames, 1) else { throw .tooLarge(width: size.width, height: size.height) }
    }
}

extension Image {
    /// A still image of `width × height` packed pixels with this image's metadata.
    func replacing(pixels: [UInt8], width: Int, height: Int, isOpaque: Bool) -> Image {
        var result = self
        result.pixels = pixels
        result.pixelWidth = width
        result.pixelHeight = height
        result.bytesPerRow = width * 4
        result.isOpaque = isOpaque
        result.frames = []
        return result
    }
}

extension ImageProcessing {
    /// Throws unless `width × height` is a size a processor may produce.
    func checkOutputSize(width: Int, height: Int) throws(ImageProcessingError) {
        guard width > 0, height > 0 else {
            throw .invalidParameter(processor: identifier, reason: "the result would be \(width) × \(height) pixels")
        }
        guard width <= ImageProcessors.maxPixelCount / height else { throw .tooLarge(width: width, height: height) }
    }

    /// Throws unless the image has pixels to process.
    func checkInput(_ image: Image) throws(ImageProcessingError) {
        if let problem = image.bufferProblem {
            throw .invalidParameter(processor: identifier, reason: problem)
        }
    }
}

/// Formats a parameter for an identifier: whole numbers without a fraction (`2`), others as the
/// shortest decimal that reads back as the same `Double` (`2.5`, `0.333`, `1.0004`). Exact, not
/// rounded: two values that render differently must never share an identifier, because the
/// identifier is the cache key of the result (`blur:1.0001` and `blur:1.0004` once shared one).
package func identifierNumber(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return value.description
}
