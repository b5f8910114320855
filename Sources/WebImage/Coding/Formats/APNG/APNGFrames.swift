/// An APNG's frames decoded in order and composited with their blend and dispose operations:
/// the ``FrameSequencing`` of APNG, for the full decode and ``APNGAnimationDecoder`` alike.
/// A frame may depend on every earlier one, so a rewind goes back to the first frame.
struct APNGFrames: FrameSequencing {
    let animation: APNGAnimation
    let sizing: FrameSizing
    /// The file; it stays in place while `owner` lives, or while the caller of
    /// ``init(borrowing:options:)`` keeps it there.
    private let bytes: UnsafeRawBufferPointer
    private let owner: PinnedBytes?
    private let regions: APNGRegionDecoder
    private var compositor: APNGCompositor
    private(set) var position = 0
    /// `true` when every frame given since the start is known to be opaque, as the compositor
    /// tracks it (`false`: scan to know).
    private(set) var everyFrameIsOpaque = true

    /// `nil` when the chunks do not describe a valid animation (the file then shows as a still
    /// PNG). At most `recording` frames are kept for drawing (every one is checked).
    init?(_ pinned: PinnedBytes, options: ImageDecodingOptions, recording: Int = .max) throws(ImageDecodingError) {
        try self.init(bytes: pinned.bytes, owner: pinned, options: options, recording: recording)
    }

    /// Over bytes the caller keeps in place as long as this value is used (the full decode,
    /// inside `withUnsafeBytes`: no copy of the file).
    init?(borrowing bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions, recording: Int = .max) throws(ImageDecodingError) {
        try self.init(bytes: bytes, owner: nil, options: options, recording: recording)
    }

    private init?(bytes: UnsafeRawBufferPointer, owner: PinnedBytes?, options: ImageDecodingOptions, recording: Int) throws(ImageDecodingError) {
        guard let animation = try APNGCoder.animation(bytes, recording: recording) else { return nil }
        self.animation = animation
        self.bytes = bytes
        self.owner = owner
        regions = APNGRegionDecoder(animation)
        sizing = FrameSizing(width: animation.width, height: animation.height, options: options)
        compositor = APNGCompositor(width: animation.width, height: animation.height)
    }

    /// The header the pixel limit is checked against, before ``next()`` allocates the canvas.
    var header: ImageHeader {
        ImageHeader(format: .apng, pixelWidth: animation.width, pixelHeight: animation.height, frameCount: animation.frameCount, hasAlpha: true)
    }

    mutating func next() throws(ImageDecodingError) -> ImageFrame? {
        guard position < animation.frames.count else { return nil }
        let frame = animation.frames[position]
        let (bytes, regions) = (bytes, regions)
        try compositor.draw(frame, isFirst: position == 0) { out throws(ImageDecodingError) in
            try regions.decode(frame, from: bytes, into: out)
        }
        position += 1
        everyFrameIsOpaque = everyFrameIsOpaque && compositor.isOpaque
        return ImageFrame(pixels: sizing.shrink(compositor.canvas), duration: ImageFrame.clampedDuration(milliseconds: frame.milliseconds))
    }

    mutating func rewind(toAtMost index: Int) {
        compositor = APNGCompositor(width: animation.width, height: animation.height)
        position = 0
        everyFrameIsOpaque = true
    }
}
