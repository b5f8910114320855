public import Foundation

/// An animation written one frame at a time, instead of from an ``Image`` holding every frame.
///
/// ``ImageEncoding/encode(_:as:quality:)`` needs every frame of an animation in memory at once;
/// an animated encoder takes frames as they are made (decoded by an ``AnimatedImageDecoding``,
/// processed) and keeps only the file written so far and what its codec needs between frames.
/// All three animated formats stream:
/// - GIF: each frame is quantized and written through giflib at once; one frame's palette
///   indices wait until the next frame arrives (its transparency decides the disposal).
/// - WebP: libwebp's `WebPAnimEncoder` compresses each frame as it is added and keeps a few
///   canvases (the previous frame and the candidate sub-frames), not the frames.
/// - APNG: each frame is compressed through ``PNGCoder`` into `fdAT` chunks; the frame count in
///   `acTL` is written when the animation finishes.
/// AVIF and the still formats have no animated encoder (``ImageCoderRegistry/animatedEncoder(as:_:)``
/// returns `nil`: encode one ``Image``).
///
/// Frames are premultiplied RGBA8 of ``AnimationEncodingParameters/pixelWidth`` ×
/// ``AnimationEncodingParameters/pixelHeight``, `4 * pixelWidth` bytes per row. The file equals
/// what ``ImageEncoding/encode(_:as:quality:)`` writes for an ``Image`` of the same frames.
///
/// ```swift
/// let parameters = AnimationEncodingParameters(pixelWidth: 64, pixelHeight: 64, loopCount: 0, isOpaque: true)
/// if let encoder = try ImageCoderRegistry.default.animatedEncoder(as: .webp, parameters) {
///     for frame in frames { try encoder.add(frame) }
///     let file = try encoder.finish()
/// }
/// ```
public protocol AnimatedImageEncoding: AnyObject {
    /// The format written.
    var format: ImageFormat { get }
    /// Frames added so far.
    var frameCount: Int { get }
    /// Encodes the next frame. Throws ``ImageEncodingError/cancelled`` when the task is cancelled.
    func add(_ frame: ImageFrame) throws(ImageEncodingError)
    /// The file, once at least one frame was added; nothing may be added after.
    func finish() throws(ImageEncodingError) -> Data
}

/// What an ``AnimatedImageEncoding`` needs to know before the first frame.
public struct AnimationEncodingParameters: Sendable {
    /// Width of every frame, in pixels.
    public var pixelWidth: Int
    /// Height of every frame, in pixels.
    public var pixelHeight: Int
    /// How many times the animation plays; 0 means forever.
    public var loopCount: Int
    /// Encoder quality, 0…1 (1 is lossless where the format has a lossless mode).
    public var quality: Double
    /// Every frame is opaque: APNG then writes RGB, and a frame with transparency is refused
    /// (pass `false` when unsure). GIF and WebP find out per frame.
    public var isOpaque: Bool

    public init(pixelWidth: Int, pixelHeight: Int, loopCount: Int, quality: Double = 1, isOpaque: Bool = false) {
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.loopCount = loopCount
        self.quality = quality
        self.isOpaque = isOpaque
    }

    /// Throws unless the sides are 1…`maxSide` (the format's, or what its C library takes as an
    /// `int`): checked before any `Int32(_:)` or area product could trap on a caller's sizes.
    func checkSides(_ format: ImageFormat, maxSide: Int) throws(ImageEncodingError) {
        let (area, overflow) = pixelWidth.multipliedReportingOverflow(by: pixelHeight)
        guard (1...maxSide).contains(pixelWidth), (1...maxSide).contains(pixelHeight), !overflow, area <= Int.max / 4 else {
            throw .encodingFailed(format: format, reason: "\(format) sides are 1…\(maxSide) pixels, not \(pixelWidth) × \(pixelHeight)")
        }
    }
}

extension ImageEncoding {
    /// `nil`: this encoder writes animations only from one ``Image``.
    public func animatedEncoder(
        as format: ImageFormat, _ parameters: AnimationEncodingParameters
    ) throws(ImageEncodingError) -> (any AnimatedImageEncoding)? {
        nil
    }
}

extension ImageCoderRegistry {
    /// An ``AnimatedImageEncoding`` from the first encoder for `format`, or `nil` when that
    /// encoder writes animations only from one ``Image`` (then use ``encode(_:as:quality:)``).
    ///
    /// ```swift
    /// let encoder = try ImageCoderRegistry.default.animatedEncoder(
    ///     as: .gif, AnimationEncodingParameters(pixelWidth: 32, pixelHeight: 32, loopCount: 0))
    /// ```
    public func animatedEncoder(
        as format: ImageFormat, _ parameters: AnimationEncodingParameters
    ) throws(ImageEncodingError) -> (any AnimatedImageEncoding)? {
        guard let encoder = encoders.first(where: { $0.canEncode(format) }) else { throw .unsupportedFormat(format) }
        return try encoder.animatedEncoder(as: format, parameters)
    }
}

extension AnimatedImageEncoding {
    /// Adds every frame of `image` (the image itself when it is still) and finishes: how the
    /// encoders write one ``Image``.
    func encodeFrames(of image: Image) throws(ImageEncodingError) -> Data {
        if image.frames.isEmpty { try add(ImageFrame(pixels: image.packedPixels, duration: .zero)) }
        for frame in image.frames { try add(frame) }
        return try finish()
    }
}

extension ImageFrame {
    /// A buffer problem of this frame for an animation of `parameters` (wrong byte count), or `nil`.
    func encodingProblem(_ parameters: AnimationEncodingParameters) -> String? {
        let (area, overflow) = parameters.pixelWidth.multipliedReportingOverflow(by: parameters.pixelHeight)
        guard !overflow, area <= Int.max / 4, pixels.count == area * 4 else {
            return "a frame of \(pixels.count) bytes is not \(parameters.pixelWidth) × \(parameters.pixelHeight) RGBA"
        }
        return nil
    }
}
