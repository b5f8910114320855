public import Foundation

/// GIF decoding and encoding over giflib 5.
///
/// Decoding composites every frame onto the full canvas the way browsers do: transparent
/// background (the background colour index is ignored, as Chrome and Firefox ignore it),
/// disposal *none*, *background* (the frame's rectangle becomes transparent) and *previous*
/// (the canvas goes back to what it was before the frame), local and global palettes,
/// interlacing, frame rectangles clipped to the canvas, and delays clamped with
/// ``ImageFrame/clampedDuration(milliseconds:)``. The loop count comes from the NETSCAPE2.0
/// extension. The file is walked once without decoding to count frames, so the pixel limit
/// (canvas × frames) is checked before any pixel buffer exists.
///
/// Leniency, as browsers (``Image/repairs``; ``ImageDecodingOptions/strict`` refuses each): frames
/// reaching outside the logical screen are clipped to it (Pillow and Chromium grow the screen
/// instead; clipping keeps the size the header reported and the pixel limit was checked
/// against); a zero-size logical screen grows to the union of the frames; a missing trailer or
/// data cut inside a frame keeps the frames before it and the rows decoded; a bad LZW code keeps
/// the decoded frames and rows; a frame with no palette at all draws black; a transparent index
/// beyond the palette is honoured; an LZW minimum code size of 9–11 (GIF's maximum is 8; Chrome,
/// Firefox and Pillow accept 11) is decoded by `GIFLZWDecoder` where giflib refuses it
/// (``ImageRepairs/codingBeyondSpec``). A local palette without a global one is valid GIF and
/// decodes in both modes.
///
/// Encoding writes one local palette per frame: exact when a frame has at most 255 colours,
/// otherwise from `GIFPalette`'s median cut. Alpha below 128 becomes the transparent index.
/// ``GIFAnimationEncoder`` writes frame by frame (this encoder's ``animatedEncoder(as:_:)``).
///
/// ```swift
/// let animation = try GIFCoder().decode(data, options: .default)
/// print(animation.frameCount, animation.loopCount, animation.frames.map(\.duration))
/// let gif = try GIFCoder().encode(animation, as: .gif, quality: 1)
/// ```
public struct GIFCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .gif }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .gif }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        guard !data.isEmpty else { throw .empty }
        return try PinnedBytes.borrowing(data) { bytes throws(ImageDecodingError) in try GIFScan(bytes, recording: 0).header }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard !data.isEmpty else { throw .empty }
        return try PinnedBytes.borrowing(data) { bytes throws(ImageDecodingError) in try decode(bytes, options: options) }
    }

    private func decode(_ bytes: PinnedBytes, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let scan = try GIFScan(bytes, recording: options.framesToDecode(of: .max))
        let header = scan.header
        var repairs = try scan.check(options)
        let sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
        var compositor = try GIFCompositor(bytes, sizing: sizing, strict: options.strict)
        let frames = try compositor.frames(limit: options.framesToDecode(of: header.frameCount))
        repairs.formUnion(compositor.repairs)
        // Without a transparent index or a frame short of the canvas, every composited frame
        // is opaque (the first covers the canvas, and so does each later one).
        var image = Image.decoded(
            format: .gif, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
            frameCount: header.frameCount, loopCount: scan.loopCount, scale: options.scale,
            knownOpaque: !header.hasAlpha && repairs.isDisjoint(with: [.damagedData, .truncated]))
        image.repairs = repairs
        return image
    }

    /// A ``GIFAnimationDecoder`` over `data`.
    public func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        try GIFAnimationDecoder(data, options: options)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        try image.checkEncodable(as: format)
        let animated = image.frames.count > 1
        let encoder = try GIFAnimationEncoder(
            AnimationEncodingParameters(pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight, loopCount: image.loopCount),
            animated: animated)
        return try encoder.encodeFrames(of: image)
    }

    /// A ``GIFAnimationEncoder``: frames are written as they are added.
    public func animatedEncoder(
        as format: ImageFormat, _ parameters: AnimationEncodingParameters
    ) throws(ImageEncodingError) -> (any AnimatedImageEncoding)? {
        try GIFAnimationEncoder(parameters)
    }
}
