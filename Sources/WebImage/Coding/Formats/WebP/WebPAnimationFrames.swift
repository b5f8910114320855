internal import CWebP

/// An animated WebP's frames over libwebp's demuxer, on a pinned copy of the file: the
/// ``FrameSequencing`` of animated WebP, for the full decode and ``WebPAnimationDecoder`` alike.
///
/// Each frame's bitstream (an optional `ALPH` chunk and `VP8 `, or `VP8L`) is decoded by
/// ``WebPCoder/decodeInPieces(_:pieceSize:_:)`` — the incremental decoder, with a look at
/// `Task.isCancelled` between pieces — into a buffer of the frame's size, which
/// ``WebPFrameCompositor`` puts on the canvas by libwebp's own `WebPAnimDecoder` rules (the same
/// pixels to the byte). `WebPAnimDecoderGetNext` did both in one call that a cancel could not
/// stop: up to 0.29 s for a solid 49 MP frame. Frames decode only forward, so a rewind goes back
/// to the first.
///
/// Not `Sendable`: one decode call, or one animated decoder's lock, owns it.
final class WebPAnimationFrames: FrameSequencing {
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    private let bytes: PinnedBytes
    private let demuxer: OpaquePointer
    private let frameCount: Int
    /// The frames the demuxer read: all of them, or those the decode may draw.
    private let demuxedFrames: Int
    /// Whether the frames are `ANMF` chunks (not a still image's one bitstream).
    private let isAnimation: Bool
    private let compositor: WebPFrameCompositor
    private let sizing: FrameSizing
    /// Each frame found in constant time (the demuxer walks its list from the first).
    private let index: WebPFrameIndex
    private(set) var position = 0

    /// The pixel limit must have been checked against the header first.
    init(_ bytes: PinnedBytes, options: ImageDecodingOptions) throws(ImageDecodingError) {
        let container = WebPContainer(walking: bytes.bytes)
        if container.isCancelled { throw .cancelled }
        // Before the demuxer, which keeps a record of every chunk.
        guard container.frameCount == 0 || container.otherChunks <= WebPFrameIndex.maxOtherChunks else {
            throw .corrupt(format: .webp, reason: "\(container.otherChunks) chunks besides the frames, more than \(WebPFrameIndex.maxOtherChunks)")
        }
        let index = WebPFrameIndex(container)
        // The demuxer keeps a record of every frame it reads (about 150 bytes each: 150 MB for
        // the million one-pixel frames of a 48 MB file), so it reads only the frames this decode
        // may draw; the index finds any later one, checked as each frame is (``placement(of:complete:declared:)``).
        let drawn = options.framesToDecode(of: container.frameCount)
        let shown = drawn < container.frameStarts.count ? container.frameStarts[drawn] - 8 : bytes.bytes.count
        var input = WebPData(bytes: bytes.uint8Pointer, size: shown)
        var state = WEBP_DEMUX_PARSING_HEADER
        let opened = shown < bytes.bytes.count ? WebPDemuxPartial(&input, &state) : WebPDemux(&input)
        guard let demuxer = opened else { throw .corrupt(format: .webp, reason: "invalid animation") }
        let width = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH)), height = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT))
        guard width > 0, height > 0 else {
            WebPDemuxDelete(demuxer)
            throw .corrupt(format: .webp, reason: "invalid animation canvas")
        }
        self.bytes = bytes
        self.demuxer = demuxer
        canvasWidth = width
        canvasHeight = height
        loopCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_LOOP_COUNT))
        demuxedFrames = Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
        isAnimation = WebPDemuxGetI(demuxer, WEBP_FF_FORMAT_FLAGS) & ANIMATION_FLAG.rawValue != 0
        frameCount = shown < bytes.bytes.count && isAnimation ? container.frameCount : demuxedFrames
        compositor = WebPFrameCompositor(width: width, height: height)
        sizing = FrameSizing(width: width, height: height, options: options)
        self.index = index
    }

    deinit { WebPDemuxDelete(demuxer) }

    var targetSize: (width: Int, height: Int) { (sizing.targetWidth, sizing.targetHeight) }

    func next() throws(ImageDecodingError) -> ImageFrame? {
        guard let milliseconds = try advance() else { return nil }
        let pixels = try compositor.shown(premultiplied: true)
        return ImageFrame(pixels: sizing.shrink(pixels), duration: ImageFrame.clampedDuration(milliseconds: milliseconds))
    }

    /// The next frame as libwebp's `WebPAnimDecoderGetNext` gives it: the canvas in straight
    /// RGBA8, and the frame's own 24-bit duration as stored (libwebp's timestamps are their
    /// running sum, a C `int` that wraps).
    func nextCanvas() throws(ImageDecodingError) -> (rgba: [UInt8], milliseconds: Int)? {
        guard let milliseconds = try advance() else { return nil }
        return (try compositor.shown(premultiplied: false), milliseconds)
    }

    /// Decodes the next frame and composites it: its duration, or nil after the last frame. A
    /// cancel while decoding or blending leaves the state as it was; one while the frame is
    /// copied out (``WebPFrameCompositor/shown(premultiplied:)``) loses only that frame, as the
    /// position has moved on (asked for again, it is decoded again from the first frame).
    private func advance() throws(ImageDecodingError) -> Int? {
        guard position < frameCount else { return nil }
        if isAnimation, let frame = index.frame(position, in: bytes.bytes) {
            return try show(frame, complete: true, declared: (frame.width, frame.height))
        }
        var iterator = WebPIterator()
        guard position < demuxedFrames, let number = Int32(exactly: position + 1), WebPDemuxGetFrame(demuxer, number, &iterator) != 0 else {
            throw .corrupt(format: .webp, reason: "frame \(position) is missing")
        }
        defer { WebPDemuxReleaseIterator(&iterator) }
        let fragment = UnsafeRawBufferPointer(start: iterator.fragment.bytes, count: iterator.fragment.size)
        let frame = WebPFrameIndex.Frame(
            x: Int(iterator.x_offset), y: Int(iterator.y_offset), width: Int(iterator.width), height: Int(iterator.height),
            milliseconds: Int(iterator.duration), blends: iterator.blend_method == WEBP_MUX_BLEND,
            disposesToBackground: iterator.dispose_method == WEBP_MUX_DISPOSE_BACKGROUND, fragment: fragment, hasAlpha: iterator.has_alpha != 0)
        let declared = isAnimation ? try declaredSize(of: fragment) : (canvasWidth, canvasHeight)
        return try show(frame, complete: iterator.complete != 0, declared: declared)
    }

    /// Decodes `frame` and composites it; its duration.
    private func show(_ frame: WebPFrameIndex.Frame, complete: Bool, declared: (Int, Int)) throws(ImageDecodingError) -> Int {
        let placement = try placement(of: frame, complete: complete, declared: declared)
        // Inside the canvas, which passed the pixel limit: no overflow.
        let pixels = try WebPFrameCompositor.Buffer(byteCount: placement.width * placement.height * 4, zeroed: false)
        try decode(frame.fragment, into: pixels.bytes, width: placement.width, height: placement.height)
        try compositor.composite(pixels, at: placement)
        position += 1
        return frame.milliseconds
    }

    func rewind(toAtMost index: Int) {
        compositor.reset()
        position = 0
    }

    /// The frame's rectangle, refused unless it lies inside the canvas and its bitstream is as
    /// large as the frame header says (`declared`; the demuxer takes the size from the bitstream alone).
    private func placement(
        of frame: WebPFrameIndex.Frame, complete: Bool, declared: (Int, Int)
    ) throws(ImageDecodingError) -> WebPFrameCompositor.Placement {
        let x = frame.x, y = frame.y, width = frame.width, height = frame.height
        let (right, o1) = x.addingReportingOverflow(width), (bottom, o2) = y.addingReportingOverflow(height)
        guard complete, x >= 0, y >= 0, width > 0, height > 0, !o1, !o2, right <= canvasWidth, bottom <= canvasHeight else {
            throw .corrupt(format: .webp, reason: "frame \(position) lies outside the \(canvasWidth)×\(canvasHeight) canvas")
        }
        var features = WebPBitstreamFeatures()
        guard WebPGetFeatures(frame.fragment.baseAddress?.assumingMemoryBound(to: UInt8.self), frame.fragment.count, &features) == VP8_STATUS_OK,
              Int(features.width) == width, Int(features.height) == height, declared == (width, height) else {
            throw .corrupt(format: .webp, reason: "frame \(position)'s bitstream is not the \(declared.0)×\(declared.1) its header declares")
        }
        return .init(
            x: x, y: y, width: width, height: height, hasAlpha: frame.hasAlpha ?? (features.has_alpha != 0),
            blends: frame.blends, disposesToBackground: frame.disposesToBackground)
    }

    /// The size an `ANMF` header declares for the bitstream at `fragment`: its frame data (the
    /// bitstream's first chunk) follows the chunk's 8-byte header and 16 bytes of frame header.
    private func declaredSize(of fragment: UnsafeRawBufferPointer) throws(ImageDecodingError) -> (Int, Int) {
        guard let base = bytes.bytes.baseAddress, let start = fragment.baseAddress else { throw .corrupt(format: .webp, reason: "frame without data") }
        let offset = start - base
        guard offset >= 12 + 24, offset <= bytes.bytes.count, bytes.bytes[(offset - 24)..<(offset - 20)].elementsEqual("ANMF".utf8) else {
            throw .corrupt(format: .webp, reason: "frame \(position) is not in an ANMF chunk")
        }
        func le24(_ at: Int) -> Int { Int(bytes.bytes[at]) | Int(bytes.bytes[at + 1]) << 8 | Int(bytes.bytes[at + 2]) << 16 }
        return (1 + le24(offset - 10), 1 + le24(offset - 7))
    }

    /// Straight RGBA8 of the frame's bitstream into `pixels` (every pixel written on success).
    private func decode(_ fragment: UnsafeRawBufferPointer, into pixels: UnsafeMutableRawBufferPointer, width: Int, height: Int) throws(ImageDecodingError) {
        let status = pixels.withMemoryRebound(to: UInt8.self) { rgba -> VP8StatusCode? in
            guard var config = WebPCoder.rgbaConfig(writingTo: rgba, width: width) else { return VP8_STATUS_INVALID_PARAM }
            defer { WebPFreeDecBuffer(&config.output) }
            return WebPCoder.decodeInPieces(fragment, pieceSize: WebPCoder.pieceSize(codedBytes: fragment.count), &config)
        }
        guard let status else { throw .cancelled }
        do {
            try WebPCoder.check(status)
        } catch {
            guard case .corrupt(_, let reason) = error else { throw error }
            throw .corrupt(format: .webp, reason: "frame \(position): \(reason)")
        }
    }
}
