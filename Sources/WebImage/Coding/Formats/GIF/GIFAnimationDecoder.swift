public import Foundation

/// A GIF's frames one at a time: the ``AnimatedImageDecoding`` of ``GIFCoder``.
///
/// The file is walked once up front without decoding pixels (frame count, delays, loop count,
/// leniency); each canvas is then composited as ``GIFCoder/decode(_:options:)`` composites it.
/// A GIF frame may depend on every earlier frame, so asking for an earlier frame than the last
/// decodes again from the first. Holds a copy of the data, one canvas, and one more while a
/// frame with disposal *previous* shows.
///
/// ```swift
/// let animation = try GIFAnimationDecoder(data)
/// let last = try animation.frame(at: animation.frameCount - 1)
/// ```
public final class GIFAnimationDecoder: AnimatedImageDecoding {
    public let format = ImageFormat.gif
    public let pixelWidth: Int
    public let pixelHeight: Int
    public let frameCount: Int
    public let loopCount: Int
    /// What a lenient decode forgives in the file's structure, known before any frame is
    /// decoded, and in the frames decoded so far (damaged pixel data is found only while decoding).
    public var repairs: ImageRepairs { structureRepairs.union(playhead.repairs) }
    private let structureRepairs: ImageRepairs
    private let playhead: AnimationPlayhead<GIFCompositor>

    /// Reads the file's structure; refuses it as the full decode would (pixel limit for one
    /// canvas and for each frame's declared area, strict mode) before allocating any canvas.
    public init(_ data: Data, options: ImageDecodingOptions = .default) throws(ImageDecodingError) {
        guard !data.isEmpty else { throw .empty }
        let bytes = PinnedBytes(copying: data)
        let scan = try GIFScan(bytes)
        structureRepairs = try scan.check(options, lazily: true)
        let sizing = FrameSizing(width: scan.header.pixelWidth, height: scan.header.pixelHeight, options: options)
        (pixelWidth, pixelHeight) = (sizing.targetWidth, sizing.targetHeight)
        (frameCount, loopCount) = (scan.header.frameCount, scan.loopCount)
        let compositor = try GIFCompositor(bytes, sizing: sizing, strict: options.strict)
        playhead = AnimationPlayhead(compositor, format: .gif, durations: scan.durations)
    }

    public func duration(at index: Int) -> Duration { playhead.duration(at: index) }

    public func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame { try playhead.frame(at: index) }
}
