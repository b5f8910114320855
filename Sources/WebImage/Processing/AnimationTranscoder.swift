public import Foundation

/// An animation decoded, processed and encoded one frame at a time: memory holds a few canvases
/// and the file written so far, not every frame (a 600-frame GIF of 1000 × 1000 would be 2.4 GB
/// decoded at once).
///
/// Each frame comes from an ``AnimatedImageDecoding`` (the canvas it composites, and the last
/// frame it gave), is turned upright, given to `process` (processors, a fit: the same work for
/// every frame) and then to the format's ``AnimatedImageEncoding``; nothing of it is kept. The
/// encoder is made once the first frame is processed, at its size; every later frame must come
/// out the same size. The task's cancellation is checked between frames (and by the decoders,
/// processors and encoders inside them).
///
/// ```swift
/// let transcoder = AnimationTranscoder(format: .webp, quality: 0.8)
/// if let animation = try ImageCoderRegistry.default.animatedDecoder(for: gif) {
///     let webp = try transcoder.transcode(animation, isOpaque: false) { frame in
///         try frame.processed(by: [.resize(width: 128, height: 128)])
///     }
/// }
/// ```
public struct AnimationTranscoder: Sendable {
    /// The output format: one with an animated encoder (GIF, WebP, APNG).
    public var format: ImageFormat
    /// Encoder quality, 0…1.
    public var quality: Double
    /// Frames beyond this are dropped (as imgproxy's `MAX_ANIMATION_FRAMES` does).
    public var maxFrames: Int
    public var coders: ImageCoderRegistry

    /// Time spent in each stage, summed over the frames.
    public struct Timings: Sendable {
        public var decode: Duration = .zero
        public var process: Duration = .zero
        public var encode: Duration = .zero
    }

    public init(format: ImageFormat, quality: Double = 1, maxFrames: Int = .max, coders: ImageCoderRegistry = .default) {
        self.format = format
        self.quality = quality
        self.maxFrames = max(1, maxFrames)
        self.coders = coders
    }

    /// The file, and where the time went. `orientation` is the source's (EXIF); `isOpaque` says
    /// every source frame is opaque (the header's `!hasAlpha`): then an APNG is written as RGB
    /// when the first processed frame is opaque too. Throws the decoder's ``ImageDecodingError``,
    /// the processing's ``ImageProcessingError`` (``ImageProcessingError/cancelled`` between
    /// frames), or the encoder's ``ImageEncodingError`` (``ImageEncodingError/unsupportedFormat(_:)``
    /// when ``format`` has no animated encoder).
    public func transcode(
        _ animation: any AnimatedImageDecoding, orientation: ImageOrientation = .up, isOpaque: Bool,
        process: (Image) throws -> Image
    ) throws -> (data: Data, timings: Timings) {
        var timings = Timings()
        let clock = ContinuousClock()
        var encoder: (any AnimatedImageEncoding)?
        var size = (width: 0, height: 0)
        for index in 0..<min(animation.frameCount, maxFrames) {
            guard !Task.isCancelled else { throw ImageProcessingError.cancelled }
            var start = clock.now
            let frame = try animation.frame(at: index)
            timings.decode += clock.now - start
            start = clock.now
            let still = Image(
                format: animation.format, pixelWidth: animation.pixelWidth, pixelHeight: animation.pixelHeight, pixels: frame.pixels,
                isOpaque: isOpaque, orientation: orientation)
            let processed = try process(still.oriented())
            if let problem = processed.bufferProblem { throw ImageProcessingError.invalidParameter(processor: "frame \(index)", reason: problem) }
            let pixels = processed.packedPixels
            timings.process += clock.now - start
            start = clock.now
            if encoder == nil {
                size = (processed.pixelWidth, processed.pixelHeight)
                let parameters = AnimationEncodingParameters(
                    pixelWidth: size.width, pixelHeight: size.height, loopCount: animation.loopCount, quality: quality,
                    isOpaque: isOpaque && PixelOperations.isOpaque(pixels))
                guard let made = try coders.animatedEncoder(as: format, parameters) else { throw ImageEncodingError.unsupportedFormat(format) }
                encoder = made
            } else if processed.pixelWidth != size.width || processed.pixelHeight != size.height {
                throw ImageProcessingError.invalidParameter(processor: "frame \(index)", reason: "frames changed size unevenly")
            }
            try encoder?.add(ImageFrame(pixels: pixels, duration: frame.duration))
            timings.encode += clock.now - start
        }
        guard let encoder else { throw ImageDecodingError.corrupt(format: animation.format, reason: "animation without frames") }
        let start = clock.now
        let data = try encoder.finish()
        timings.encode += clock.now - start
        return (data, timings)
    }
}
