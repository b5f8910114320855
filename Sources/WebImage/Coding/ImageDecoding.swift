public import Foundation

/// What a decoder learns from the header alone, before any pixel buffer exists.
public struct ImageHeader: Sendable, Equatable {
    public var format: ImageFormat
    public var pixelWidth: Int
    public var pixelHeight: Int
    /// Frames in the file (1 for still images).
    public var frameCount: Int
    public var hasAlpha: Bool

    public init(format: ImageFormat, pixelWidth: Int, pixelHeight: Int, frameCount: Int = 1, hasAlpha: Bool) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.frameCount = frameCount
        self.hasAlpha = hasAlpha
    }

    /// Pixels over all frames: what the decoding limit is checked against.
    public var totalPixelCount: Int {
        let (perFrame, o1) = pixelWidth.multipliedReportingOverflow(by: pixelHeight)
        let (all, o2) = perFrame.multipliedReportingOverflow(by: max(frameCount, 1))
        return o1 || o2 ? Int.max : all
    }
}

/// Options that change how data becomes pixels.
public struct ImageDecodingOptions: Sendable, Hashable {
    /// Images whose pixel count (summed over all frames) exceeds this are refused from the
    /// header, before any pixel buffer is allocated. Default 50 megapixels (imgproxy's default).
    public var maxPixelCount: Int
    /// Points-to-pixels scale given to the decoded image.
    public var scale: Double

    public init(maxPixelCount: Int = 50_000_000, scale: Double = 1) {
        self.maxPixelCount = maxPixelCount
        self.scale = scale
    }

    public static let `default` = ImageDecodingOptions()
}

/// Turns encoded data into an ``Image``.
///
/// Implement it to add a format; register the coder with ``ImageCoderRegistry``:
///
/// ```swift
/// var coders = ImageCoderRegistry.default
/// coders.insert(MyTIFFCoder(), at: 0)   // asked before the built-in coders
/// ```
public protocol ImageDecoding: Sendable {
    /// Whether this decoder handles `format` (as sniffed from the data).
    func canDecode(_ format: ImageFormat) -> Bool
    /// Reads size and frame count without decoding pixels.
    func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader
    /// Decodes the data. Must check ``ImageDecodingOptions/maxPixelCount`` before allocating.
    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image
}

/// Turns an ``Image`` into encoded data.
public protocol ImageEncoding: Sendable {
    func canEncode(_ format: ImageFormat) -> Bool
    /// - Parameter quality: 0...1 for lossy formats; ignored by lossless ones.
    func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageDecodingError) -> Data
}
