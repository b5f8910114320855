public import Foundation

/// An AVIF sequence's frames one at a time: the ``AnimatedImageDecoding`` of ``AVIFCoder``.
///
/// The container is parsed up front (frame count, durations); frames decode through libavif
/// when asked for. Asking for an earlier frame than the last one makes libavif decode from the
/// nearest key frame before it. ``loopCount`` is 0 (forever), as for the full decode. A still
/// AVIF is a sequence of one frame. As in ``AVIFCoder``'s full decode, the frames of a 10- or
/// 12-bit file whose colour statement converts come out in sRGB already, converted at 16 bits
/// before narrowing (with the default colour handling, `srgb`); other frames come out as stored,
/// and ``ImageCoderRegistry/animatedDecoder(for:options:)`` converts them.
///
/// ```swift
/// let sequence = try AVIFAnimationDecoder(data)
/// let first = try sequence.frame(at: 0)
/// ```
public final class AVIFAnimationDecoder: AnimatedImageDecoding, ColorConvertedAnimation {
    public let format = ImageFormat.avif
    public let pixelWidth: Int
    public let pixelHeight: Int
    public let frameCount: Int
    public let loopCount = 0
    private let playhead: AnimationPlayhead<AVIFFrames>
    /// Set when 10- and 12-bit frames convert to sRGB at 16 bits as they decode (``WideColorConversion``).
    let convertedColorProfile: ColorProfile?

    /// Parses the container; refuses a frame over the pixel limit before decoding any.
    public init(_ data: Data, options: ImageDecodingOptions = .default) throws(ImageDecodingError) {
        let frames = try AVIFFrames(PinnedBytes(copying: data), strict: options.strict)
        var oneCanvas = options
        oneCanvas.firstFrameOnly = true
        try oneCanvas.checkPixelLimit(frames.header)
        let sizing = frames.size(for: options)
        (pixelWidth, pixelHeight) = (sizing.targetWidth, sizing.targetHeight)
        frameCount = frames.header.frameCount
        let durations = (0..<frameCount).map { frames.duration(at: $0) }
        // One frame is decoded at a time: its RGBA16 buffer lives while it converts.
        frames.wide = WideColorConversion.planned(
            width: frames.header.pixelWidth, height: frames.header.pixelHeight, bitDepth: frames.depth, options: options
        ) { EmbeddedColor.read(from: data, format: .avif) }
        convertedColorProfile = frames.wide?.profile
        playhead = AnimationPlayhead(frames, format: .avif, durations: durations)
    }

    public func duration(at index: Int) -> Duration { playhead.duration(at: index) }

    public func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame { try playhead.frame(at: index) }

    /// Damaged metadata a lenient decode skipped (as ``AVIFCoder``'s full decode reports it).
    public var repairs: ImageRepairs { playhead.repairs }
}
