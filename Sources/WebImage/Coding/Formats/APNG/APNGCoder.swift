public import Foundation

/// Animated PNG decoding and encoding; frames decode through libspng.
///
/// Decoding reads the animation chunks (`APNGAnimation`), refuses canvas × frames over
/// ``ImageDecodingOptions/maxPixelCount`` before any pixel buffer exists, then decodes each
/// frame's region with libspng (every colour type and bit depth, palette with `tRNS`, 16-bit
/// reduced to 8) and composites it with its blend and dispose operations. `num_plays` is the
/// loop count (0 = forever); a delay with denominator 0 counts in 1/100 s, and then
/// ``ImageFrame/clampedDuration(milliseconds:)`` applies as for GIF and WebP. When the default
/// image (IDAT) is not part of the animation it is skipped, as browsers do. An APNG whose
/// animation chunks are broken (bad CRC, sequence, region, missing frames, undecodable frame
/// data) decodes as the still PNG it contains, with format ``ImageFormat/png``.
///
/// Encoding writes every frame full-canvas (blend *source*, dispose *none*), each with its
/// duration in milliseconds, and the loop count; decoding the result gives back the same pixels,
/// durations and loop count. ``APNGAnimationEncoder`` writes frame by frame.
///
/// ```swift
/// let animation = try APNGCoder().decode(data, options: .default)
/// print(animation.frameCount, animation.loopCount, animation.frames.map(\.duration))
/// let apng = try APNGCoder().encode(animation, as: .apng, quality: 1)
/// ```
public struct APNGCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .apng }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .apng }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        let parsed = data.withUnsafeBytes { bytes in Result { () throws(ImageDecodingError) in try Self.animation(bytes, recording: 0) } }
        guard let animation = try parsed.get() else { return try PNGCoder().readHeader(data) }
        let still = try PNGCoder().readHeader(data)
        return ImageHeader(
            format: .apng, pixelWidth: animation.width, pixelHeight: animation.height, frameCount: animation.frameCount,
            hasAlpha: still.hasAlpha || animation.hasPartialFrame)
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        // The frames are walked inside `withUnsafeBytes`, over the data in place (no copy of the file).
        let result = data.withUnsafeBytes { bytes -> Result<Image?, ImageDecodingError> in
            do throws(ImageDecodingError) {
                return .success(try Self.decodeAnimation(bytes, options: options))
            } catch {
                return .failure(error)
            }
        }
        guard let image = try result.get() else { return try PNGCoder().decode(data, options: options) }
        return image
    }

    /// An ``APNGAnimationDecoder`` over `data`; `nil` when its animation chunks are broken (the
    /// file decodes as a still PNG).
    public func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        try APNGAnimationDecoder(data, options: options)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        try image.checkEncodable(as: format)
        let encoder = try APNGAnimationEncoder(AnimationEncodingParameters(
            pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight, loopCount: image.loopCount, isOpaque: image.isOpaque))
        return try encoder.encodeFrames(of: image)
    }

    /// An ``APNGAnimationEncoder``: frames are compressed as they are added.
    public func animatedEncoder(
        as format: ImageFormat, _ parameters: AnimationEncodingParameters
    ) throws(ImageEncodingError) -> (any AnimatedImageEncoding)? {
        try APNGAnimationEncoder(parameters)
    }

    // MARK: - Internals

    /// The animation, or `nil` when the chunks do not describe a valid one (then the still image
    /// shows); `.cancelled` when the task was cancelled during the walk. At most `recording`
    /// frames are kept for drawing.
    static func animation(_ bytes: UnsafeRawBufferPointer, recording: Int) throws(ImageDecodingError) -> APNGAnimation? {
        do {
            return try APNGAnimation(bytes, recording: recording)
        } catch .cancelled {
            throw .cancelled
        } catch {
            return nil
        }
    }

    /// Every frame (or the first) composited; `nil` when the file shows as its still image: its
    /// animation chunks are broken, or a frame does not decode, as browsers do.
    private static func decodeAnimation(
        _ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions
    ) throws(ImageDecodingError) -> Image? {
        let recording = options.framesToDecode(of: .max)
        guard var frames = try APNGFrames(borrowing: bytes, options: options, recording: recording) else { return nil }
        try options.checkPixelLimit(frames.header)
        let animation = frames.animation
        let decoded: [ImageFrame]
        do {
            decoded = try frames.frames(limit: options.framesToDecode(of: animation.frameCount))
        } catch .cancelled {
            throw .cancelled
        } catch {
            return nil
        }
        let sizing = frames.sizing
        // Opacity tracked while compositing spares the scan of every frame; a shrunk frame is scanned.
        let fullSize = sizing.targetWidth == sizing.width && sizing.targetHeight == sizing.height
        return Image.decoded(
            format: .apng, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: decoded,
            frameCount: animation.frameCount, loopCount: animation.loopCount, scale: options.scale,
            knownOpaque: fullSize && frames.everyFrameIsOpaque)
    }
}
