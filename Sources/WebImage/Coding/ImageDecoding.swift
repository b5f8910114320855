public import Foundation

/// What a decoder learns from the header alone, before any pixel buffer exists.
public struct ImageHeader: Sendable, Equatable {
    public var format: ImageFormat
    public var pixelWidth: Int
    public var pixelHeight: Int
    /// Frames in the file (1 for still images).
    public var frameCount: Int
    public var hasAlpha: Bool
    /// Bytes the decoder holds on its own whatever the output size (0 when that is small): a
    /// progressive JPEG's whole-image coefficient buffer. Memory budgets add it to a decode's price.
    public var decoderWorkingBytes = 0

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
    /// Decode only the first frame of an animation (``Image/frames`` stays empty; the pixel
    /// limit is then checked against one frame). ``Image/frameCount`` still reports the file's count.
    public var firstFrameOnly: Bool
    /// When set, the longest side of the result is at most this many pixels (aspect ratio kept,
    /// never enlarged). JPEG and WebP decode at a reduced size straight from the compressed data;
    /// other formats decode, then downscale with ``Resampler``.
    public var thumbnailMaxPixelSize: Int?
    /// Refuse files that break their format's rules instead of decoding them the way browsers
    /// do (junk bytes, truncation, bad ancillary CRCs, frames outside the canvas: see
    /// ``ImageRepairs``). Default `false`: lenient, with ``Image/repairs`` saying what was forgiven.
    public var strict: Bool = false
    /// A budget for the decoded pixels, in bytes (4 per pixel, every decoded frame counted;
    /// SDWebImage's `imageScaleDownLimitBytes`): a larger image is decoded at the reduced size
    /// that fits — JPEG and WebP straight from the compressed data, others then resampled —
    /// instead of being refused. `nil` (the default): no budget. ``maxPixelCount`` still refuses
    /// decompression bombs first.
    public var maxDecodedBytes: Int?
    /// Frames of an animation or pages of a TIFF decoded at most; the rest are dropped (as
    /// imgproxy's `MAX_ANIMATION_FRAMES` does), and the pixel limit counts only the frames
    /// kept. Default `Int.max`: every frame. A server sets it so that a file of many tiny
    /// frames cannot make it hold millions of frame buffers.
    public var maxFrameCount: Int = .max
    /// What happens to an embedded colour profile: converted to sRGB (the default), kept with
    /// the pixels untouched, or ignored. See ``ColorHandling``.
    public var colorHandling: ColorHandling = .convertToSRGB

    /// ```swift
    /// let options = ImageDecodingOptions(firstFrameOnly: true, thumbnailMaxPixelSize: 256)
    /// let thumbnail = try ImageCoderRegistry.default.decode(data, options: options)
    /// let checked = try ImageCoderRegistry.default.decode(data, options: .init(strict: true))
    /// ```
    public init(
        maxPixelCount: Int = 50_000_000, scale: Double = 1, firstFrameOnly: Bool = false,
        thumbnailMaxPixelSize: Int? = nil, strict: Bool = false
    ) {
        self.strict = strict
        self.maxPixelCount = maxPixelCount
        self.scale = scale
        self.firstFrameOnly = firstFrameOnly
        self.thumbnailMaxPixelSize = thumbnailMaxPixelSize.map { max($0, 1) }
    }

    public static let `default` = ImageDecodingOptions()

    /// How many of a file's `frameCount` frames a decode keeps: one with ``firstFrameOnly``,
    /// else at most ``maxFrameCount`` (and at least one).
    func framesToDecode(of frameCount: Int) -> Int {
        firstFrameOnly ? 1 : max(1, min(frameCount, maxFrameCount))
    }

    /// These options with ``thumbnailMaxPixelSize`` lowered so an image of `header` decodes
    /// within ``maxDecodedBytes``.
    func fittingBudget(of header: ImageHeader) -> ImageDecodingOptions {
        guard let maxDecodedBytes, header.pixelWidth > 0, header.pixelHeight > 0 else { return self }
        let frames = framesToDecode(of: header.frameCount)
        let bytes = Double(header.pixelWidth) * Double(header.pixelHeight) * 4 * Double(frames)
        let budget = Double(max(maxDecodedBytes, 4))  // zero or less: one pixel
        guard bytes > budget else { return self }
        var options = self
        let fitting = max(1, Int(Double(max(header.pixelWidth, header.pixelHeight)) * (budget / bytes).squareRoot()))
        options.thumbnailMaxPixelSize = min(thumbnailMaxPixelSize ?? .max, fitting)
        return options
    }
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
    /// A decoder that gives the frames of an animation one at a time (see
    /// ``AnimatedImageDecoding``), or `nil` (the default) when this decoder decodes animations
    /// only all at once.
    func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)?
}

/// Turns an ``Image`` into encoded data.
public protocol ImageEncoding: Sendable {
    func canEncode(_ format: ImageFormat) -> Bool
    /// - Parameters:
    ///   - image: the image to write (every frame, for an animated format).
    ///   - format: the format to write; one ``canEncode(_:)`` accepts.
    ///   - quality: 0...1 for lossy formats; ignored by lossless ones.
    func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data
    /// An encoder that takes an animation's frames one at a time (see ``AnimatedImageEncoding``),
    /// or `nil` (the default) when this encoder writes animations only from one ``Image``.
    func animatedEncoder(as format: ImageFormat, _ parameters: AnimationEncodingParameters) throws(ImageEncodingError) -> (any AnimatedImageEncoding)?
}

extension ImageDecodingOptions {
    /// Throws ``ImageDecodingError/tooManyPixels(width:height:frames:limit:)`` when decoding
    /// `header` would exceed ``maxPixelCount``: the frames decoded (all, at most
    /// ``maxFrameCount``, or one with ``firstFrameOnly``).
    /// Call it before allocating any pixel buffer.
    ///
    /// ```swift
    /// try options.checkPixelLimit(try ImageCoderRegistry.default.readHeader(data))
    /// ```
    public func checkPixelLimit(_ header: ImageHeader) throws(ImageDecodingError) {
        var counted = header
        counted.frameCount = framesToDecode(of: header.frameCount)
        guard counted.totalPixelCount <= maxPixelCount else {
            throw .tooManyPixels(
                width: header.pixelWidth, height: header.pixelHeight, frames: max(counted.frameCount, 1),
                limit: maxPixelCount)
        }
    }
}
