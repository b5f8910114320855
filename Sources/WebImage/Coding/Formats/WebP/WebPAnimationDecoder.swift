public import Foundation

/// An animated WebP's frames one at a time: the ``AnimatedImageDecoding`` of ``WebPCoder``.
///
/// `WebPAnimationFrames` decodes and composites each frame as the full decode does (a cancel
/// stops a frame's decode between pieces of its bitstream); the delays and loop count are read
/// from the container up front. Frames decode only forward, so asking for an earlier frame than
/// the last one decodes again from the first. A still WebP is an animation of one frame.
///
/// ```swift
/// let animation = try WebPAnimationDecoder(data)
/// let frame = try animation.frame(at: 1)
/// ```
public final class WebPAnimationDecoder: AnimatedImageDecoding {
    public let format = ImageFormat.webp
    public let pixelWidth: Int
    public let pixelHeight: Int
    public let frameCount: Int
    public let loopCount: Int
    private let playhead: AnimationPlayhead<WebPAnimationFrames>

    /// Reads the container; refuses a canvas over the pixel limit before allocating it.
    public init(_ data: Data, options: ImageDecodingOptions = .default) throws(ImageDecodingError) {
        let (header, _) = try WebPCoder.inspect(data)
        var oneCanvas = options
        oneCanvas.firstFrameOnly = true
        try oneCanvas.checkPixelLimit(header)
        let frames = try WebPAnimationFrames(PinnedBytes(copying: data), options: options)
        let container = WebPContainer(data)
        (pixelWidth, pixelHeight) = frames.targetSize
        loopCount = frames.loopCount
        let stored = container.durations.isEmpty ? [0] : container.durations
        frameCount = stored.count
        playhead = AnimationPlayhead(frames, format: .webp, durations: stored.map { ImageFrame.clampedDuration(milliseconds: $0) })
    }

    public func duration(at index: Int) -> Duration { playhead.duration(at: index) }

    public func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame { try playhead.frame(at: index) }
}
