public import Foundation

/// An animation decoded one frame at a time, on demand, instead of every frame at once.
///
/// ``ImageDecoding/decode(_:options:)`` keeps every composited frame of an animation in memory;
/// a player that shows one frame at a time needs only the current one. An animated decoder
/// reads the frame count, loop count and delays from the file up front and composites frames
/// when asked, keeping only the canvas (and what disposal needs) between calls. Frames are
/// exactly those of the full decode, with the same thumbnail size and leniency.
///
/// Asking for the frames in order is cheapest: each costs one frame's decode. Asking for an
/// earlier frame than the last one restarts from a frame that does not depend on earlier ones
/// (the first frame for GIF, APNG and WebP; the nearest key frame for AVIF, which libavif
/// seeks to).
///
/// The pixel limit (``ImageDecodingOptions/maxPixelCount``) applies to one canvas, the most an
/// animated decoder holds, not to canvas × frames as for the full decode; it is still checked
/// before any pixel buffer exists. Durations are clamped with
/// ``ImageFrame/clampedDuration(milliseconds:)``.
///
/// ```swift
/// if let animation = try ImageCoderRegistry.default.animatedDecoder(for: data) {
///     for index in 0..<animation.frameCount {
///         let frame = try animation.frame(at: index)
///         show(frame.pixels, for: frame.duration)
///     }
/// }
/// ```
public protocol AnimatedImageDecoding: Sendable {
    /// The format the frames are decoded from.
    var format: ImageFormat { get }
    /// Width of every frame, in pixels (the canvas, or the thumbnail size when one was asked for).
    var pixelWidth: Int { get }
    /// Height of every frame, in pixels.
    var pixelHeight: Int { get }
    /// Frames in the file, counted without decoding them.
    var frameCount: Int { get }
    /// How many times the animation plays; 0 means forever (as ``Image/loopCount``).
    var loopCount: Int { get }
    /// How long frame `index` shows, read without decoding it. `index` must be below ``frameCount``.
    func duration(at index: Int) -> Duration
    /// Frame `index` composited onto the full canvas: premultiplied RGBA8, `4 * pixelWidth`
    /// bytes per row, equal to `decode(data).frames[index]`. `index` must be below ``frameCount``.
    /// Throws when the data breaks before that frame (a lenient full decode keeps only the
    /// frames before the break).
    func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame
    /// What a lenient decode forgave (``Image/repairs``): in the file's structure, known up
    /// front, and in the frames decoded so far. After every frame it equals the full decode's.
    var repairs: ImageRepairs { get }
}

extension AnimatedImageDecoding {
    /// Nothing forgiven.
    public var repairs: ImageRepairs { [] }
}

extension ImageDecoding {
    /// `nil`: this decoder decodes animations only all at once.
    public func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        nil
    }
}

extension ImageCoderRegistry {
    /// An ``AnimatedImageDecoding`` from the first decoder for the sniffed format that decodes it
    /// frame by frame (GIF, WebP, APNG, AVIF), or `nil` when none does: then use
    /// ``decode(_:options:)``.
    ///
    /// ```swift
    /// let animation = try ImageCoderRegistry.default.animatedDecoder(for: gif)
    /// let third = try animation?.frame(at: 2)
    /// ```
    public func animatedDecoder(
        for data: Data, options: ImageDecodingOptions = .default
    ) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        guard !data.isEmpty else { throw .empty }
        guard let format = ImageFormat(sniffing: data), let decoder = decoders.first(where: { $0.canDecode(format) }) else {
            throw .unsupportedFormat(ImageFormat(sniffing: data))
        }
        guard let animation = try decoder.animatedDecoder(for: data, options: options) else { return nil }
        return EmbeddedColor.read(from: data, format: format).applied(to: animation, handling: options.colorHandling)
    }
}
