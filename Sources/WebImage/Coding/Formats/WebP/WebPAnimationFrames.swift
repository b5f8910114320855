internal import CWebP

/// libwebp's `WebPAnimDecoder` over a pinned copy of the file: the ``FrameSequencing`` of
/// animated WebP, for the full decode and ``WebPAnimationDecoder`` alike. libwebp composites
/// each frame onto the canvas (blending and disposal); it decodes only forward, so a rewind
/// resets it to the first frame.
///
/// Not `Sendable`: one decode call, or one animated decoder's lock, owns it.
final class WebPAnimationFrames: FrameSequencing {
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    private let bytes: PinnedBytes
    private let decoder: OpaquePointer
    private let sizing: FrameSizing
    private(set) var position = 0
    private var previousTimestamp: Int32 = 0

    /// The pixel limit must have been checked against the header first.
    init(_ bytes: PinnedBytes, options: ImageDecodingOptions) throws(ImageDecodingError) {
        var decoderOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else { throw .corrupt(format: .webp, reason: "libwebp version mismatch") }
        decoderOptions.color_mode = MODE_RGBA
        decoderOptions.use_threads = 0
        var input = WebPData(bytes: bytes.uint8Pointer, size: bytes.bytes.count)
        guard let decoder = WebPAnimDecoderNew(&input, &decoderOptions) else { throw .corrupt(format: .webp, reason: "invalid animation") }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0, info.canvas_width > 0, info.canvas_height > 0 else {
            WebPAnimDecoderDelete(decoder)
            throw .corrupt(format: .webp, reason: "invalid animation canvas")
        }
        self.bytes = bytes
        self.decoder = decoder
        canvasWidth = Int(info.canvas_width)
        canvasHeight = Int(info.canvas_height)
        loopCount = Int(info.loop_count)
        sizing = FrameSizing(width: canvasWidth, height: canvasHeight, options: options)
    }

    deinit { WebPAnimDecoderDelete(decoder) }

    var targetSize: (width: Int, height: Int) { (sizing.targetWidth, sizing.targetHeight) }

    func next() throws(ImageDecodingError) -> ImageFrame? {
        guard WebPAnimDecoderHasMoreFrames(decoder) != 0 else { return nil }
        var buffer: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
            throw .corrupt(format: .webp, reason: "frame \(position) does not decode")
        }
        var pixels = Array(UnsafeBufferPointer(start: buffer, count: canvasWidth * canvasHeight * 4))
        _ = PixelOperations.premultiply(&pixels)
        // libwebp's timestamps are C `int` sums of the frames' durations and wrap past Int32.max
        // (129 frames of the longest delay do); a duration is 24 bits, so the wrapping difference
        // of consecutive timestamps is exactly the frame's duration.
        let duration = Int(timestamp &- previousTimestamp)
        let frame = ImageFrame(pixels: sizing.shrink(pixels), duration: ImageFrame.clampedDuration(milliseconds: duration))
        previousTimestamp = timestamp
        position += 1
        return frame
    }

    func rewind(toAtMost index: Int) {
        WebPAnimDecoderReset(decoder)
        position = 0
        previousTimestamp = 0
    }
}
