public import Foundation

/// An animated PNG's frames one at a time: the ``AnimatedImageDecoding`` of ``APNGCoder``.
///
/// The animation chunks are read up front (frame count, delays, loop count); each frame's region
/// is decoded by libspng and composited with its blend and dispose operations when asked for. An
/// APNG frame may depend on every earlier one, so asking for an earlier frame than the last one
/// decodes again from the first. Unlike the full decode, which shows the still image when a
/// frame's data turns out undecodable, that frame (and the ones after it) throws.
///
/// ```swift
/// if let animation = try APNGAnimationDecoder(data) {
///     print(animation.frameCount, (0..<animation.frameCount).map(animation.duration(at:)))
/// }
/// ```
public final class APNGAnimationDecoder: AnimatedImageDecoding {
    public let format = ImageFormat.apng
    public let pixelWidth: Int
    public let pixelHeight: Int
    public let frameCount: Int
    public let loopCount: Int
    private let playhead: AnimationPlayhead<APNGFrames>

    /// Reads the animation chunks and refuses a canvas over the pixel limit before allocating it;
    /// `nil` when the chunks do not describe a valid animation (decode the file as a still PNG).
    public init?(_ data: Data, options: ImageDecodingOptions = .default) throws(ImageDecodingError) {
        guard !data.isEmpty else { throw .empty }
        guard let frames = try APNGFrames(PinnedBytes(copying: data), options: options) else { return nil }
        var oneCanvas = options
        oneCanvas.firstFrameOnly = true
        try oneCanvas.checkPixelLimit(frames.header)
        (pixelWidth, pixelHeight) = (frames.sizing.targetWidth, frames.sizing.targetHeight)
        frameCount = frames.animation.frameCount
        loopCount = frames.animation.loopCount
        let durations = frames.animation.frames.map { ImageFrame.clampedDuration(milliseconds: $0.milliseconds) }
        playhead = AnimationPlayhead(frames, format: .apng, durations: durations)
    }

    public func duration(at index: Int) -> Duration { playhead.duration(at: index) }

    public func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame { try playhead.frame(at: index) }
}
