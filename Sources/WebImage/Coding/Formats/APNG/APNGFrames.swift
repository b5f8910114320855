/// An APNG's frames decoded in order and composited with their blend and dispose operations:
/// the ``FrameSequencing`` of APNG, for the full decode and ``APNGAnimationDecoder`` alike.
/// A frame may depend on every earlier one, so a rewind goes back to the first frame.
struct APNGFrames: FrameSequencing {
    let animation: APNGAnimation
    let sizing: FrameSizing
    private let bytes: PinnedBytes
    private var compositor: APNGCompositor
    private(set) var position = 0

    /// `nil` when the chunks do not describe a valid animation (the file then shows as a still PNG).
    init?(_ bytes: PinnedBytes, options: ImageDecodingOptions) {
        guard let animation = try? APNGAnimation(bytes.bytes) else { return nil }
        self.animation = animation
        self.bytes = bytes
        sizing = FrameSizing(width: animation.width, height: animation.height, options: options)
        compositor = APNGCompositor(width: animation.width, height: animation.height)
    }

    /// The header the pixel limit is checked against, before ``next()`` allocates the canvas.
    var header: ImageHeader {
        ImageHeader(format: .apng, pixelWidth: animation.width, pixelHeight: animation.height, frameCount: animation.frames.count, hasAlpha: true)
    }

    mutating func next() throws(ImageDecodingError) -> ImageFrame? {
        guard position < animation.frames.count else { return nil }
        let frame = animation.frames[position]
        var region = try APNGCoder.decodeRegion(frame, of: animation, in: bytes.bytes)
        _ = PixelOperations.premultiply(&region)
        compositor.draw(region, frame: frame, isFirst: position == 0)
        position += 1
        return ImageFrame(pixels: sizing.shrink(compositor.canvas), duration: ImageFrame.clampedDuration(milliseconds: frame.milliseconds))
    }

    mutating func rewind(toAtMost index: Int) {
        compositor = APNGCompositor(width: animation.width, height: animation.height)
        position = 0
    }
}
