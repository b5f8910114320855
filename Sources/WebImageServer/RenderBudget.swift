import Foundation
import WebImage

/// What one render may cost, priced from the source's header and the parsed parameters before
/// any pixel is decoded: a request over budget is answered `422 output_too_large` (or `400` for
/// too many steps) at once, instead of being refused — or not — after seconds of work.
///
/// The price follows the render as ``ImageRenderer`` will run it: the frames kept (an animation
/// kept as one, at most ``maxAnimationFrames`` of them: later frames are dropped, as imgproxy's
/// `MAX_ANIMATION_FRAMES` does), every step's size from ``ImageProcessing/outputSize(width:height:)``
/// (in either orientation, since EXIF may turn the picture first) — `trim` and `process`, the
/// resize (`w`, `h` × `dpr`, `enlarge`), then the effects, `extend` and `padding`, so the limit
/// holds the final, padded size — and the final fit into the output side. Two limits hold:
/// - the result's pixels × its frames ≤ ``maxOutputPixels`` — an enlargement is allowed only
///   inside it (a 4 KB GIF of 20 frames asked at 7000 × 7000 would hold 980 MP);
/// - every intermediate of one frame ≤ ``maxOutputPixels`` (a rotation that grows the canvas,
///   an enlargement that a later step shrinks).
///
/// ```swift
/// let budget = RenderBudget(maxOutputPixels: 50_000_000, maxAnimationFrames: 256, maxSteps: 16)
/// try budget.check(steps: parameters.processors.count)        // before fetching
/// let price = try budget.price(data, header: header, renderer: renderer)   // frames kept, bytes held
/// ```
struct RenderBudget: Sendable {
    var maxOutputPixels: Int
    var maxAnimationFrames: Int
    var maxSteps: Int

    init(maxOutputPixels: Int, maxAnimationFrames: Int, maxSteps: Int) {
        self.maxOutputPixels = max(1, maxOutputPixels)
        self.maxAnimationFrames = max(1, maxAnimationFrames)
        self.maxSteps = max(0, maxSteps)
    }

    init(_ configuration: ImageServerConfiguration) {
        self.init(
            maxOutputPixels: configuration.maxOutputPixels, maxAnimationFrames: configuration.maxAnimationFrames,
            maxSteps: configuration.maxProcessSteps)
    }

    /// Refuses a `process=` of more than ``maxSteps`` steps: checked with the parameters, before
    /// the source is fetched.
    func check(steps: Int) throws(ImageServerError) {
        guard steps <= maxSteps else {
            throw .badParameter("'process' has \(steps) steps, more than the limit of \(maxSteps)")
        }
    }

    /// What a render will hold at its peak.
    struct Price: Sendable {
        /// Frames kept.
        var frames: Int
        /// Bytes: the decoded source, the costliest step (its input, its result and its own
        /// buffers, ``ImageProcessing/workingBytes(width:height:)``), the result's frames and what
        /// the encoder needs (see ``encodingBytesPerPixel(_:)``). An animation rendered frame by
        /// frame (``ImageRenderer/streams(_:)``) holds one source canvas (three copies at most),
        /// one result frame and the file instead of every frame.
        var bytes: Int
        /// How the render decodes the source (the frames kept included).
        var decoding: ImageDecodingOptions
    }

    /// The render's price, or the error that refuses it.
    func price(_ source: Data, header: ImageHeader, renderer: ImageRenderer) throws(ImageServerError) -> Price {
        let processors = renderer.processors
        let frames = renderer.keepsAnimation(header) ? min(max(header.frameCount, 1), maxAnimationFrames) : 1
        var steps = processors
        if let resize = renderer.resize { steps.append(resize) }
        steps += renderer.finishing
        var output = 0, peak = 0, stepBytes = 0
        // The picture as decoded and as turned upright: whichever costs more.
        for (width, height) in [(header.pixelWidth, header.pixelHeight), (header.pixelHeight, header.pixelWidth)] {
            var size = (width: max(width, 1), height: max(height, 1))
            for step in steps {
                let input = MemoryBudget.area(size.width, size.height), working = step.workingBytes(width: size.width, height: size.height)
                size = step.outputSize(width: size.width, height: size.height)
                guard size.width > 0, size.height > 0 else { break }
                peak = max(peak, MemoryBudget.area(size.width, size.height))
                // While a step runs it holds its input, its result and its own buffers.
                stepBytes = max(stepBytes, Self.sum([Self.times(input, 4), Self.times(MemoryBudget.area(size.width, size.height), 4), working]))
            }
            if max(size.width, size.height) > renderer.maxSide {
                size = Resampler.fittingSize(width: size.width, height: size.height, maxWidth: renderer.maxSide, maxHeight: renderer.maxSide)
            }
            output = max(output, MemoryBudget.area(size.width, size.height))
        }
        let (total, overflow) = output.multipliedReportingOverflow(by: frames)
        guard !overflow, total <= maxOutputPixels, peak <= maxOutputPixels else {
            let what = frames > 1 ? "\(output) pixels × \(frames) frames" : "\(max(output, peak)) pixels"
            throw ImageServerError(
                status: 422, code: "output_too_large",
                message: "the result would be \(what), over the limit of \(maxOutputPixels) pixels")
        }
        var decoding = renderer.decodingOptions(source, header: header)
        decoding.maxFrameCount = frames
        let held: [Int]
        if renderer.streams(header) {
            // Frame by frame: the decoder's canvas, the frame it gave and a copy for disposal
            // *previous*; one processed frame; the file, its compressed frames estimated at a
            // byte a pixel (GIF's LZW codes and lossless WebP or APNG of photos can take more;
            // typical animations far less).
            var oneCanvas = decoding
            oneCanvas.firstFrameOnly = true
            held = [Self.times(MemoryBudget.bytes(toDecode: header, options: oneCanvas), 3), Self.times(output, 4), total]
        } else {
            // A decode in a worker process (``ImageServerConfiguration/coders``) holds the pixels
            // there too, until they have reached this process: counted twice.
            held = [MemoryBudget.bytes(toDecode: header, options: decoding, coders: renderer.coders), Self.times(total, 4)]
        }
        // `max_bytes` encodes again (one at a time, at most ``ImageParameters/maxBytesEncodes``),
        // holding the best file so far beside the one being written: one more file, at most the
        // result's 4 bytes a pixel.
        let rewrites = renderer.parameters.maxBytes != nil && renderer.isLossy ? Self.times(output, 4) : 0
        // An encode in a worker process holds the result's pixels there too.
        let quality = renderer.isLossy ? Double(renderer.quality) / 100 : 1
        let workerCopy = renderer.coders.isolatesEncode(pixelCount: total, as: renderer.outputFormat, quality: quality) ? Self.times(total, 4) : 0
        let bytes = Self.sum(held + [stepBytes, rewrites, workerCopy, Self.times(output, Self.encodingBytesPerPixel(renderer.outputFormat))])
        return Price(frames: frames, bytes: bytes, decoding: decoding)
    }

    private static func sum(_ values: [Int]) -> Int {
        values.reduce(0) { sum, value in sum > Int.max - value ? .max : sum + value }
    }

    private static func times(_ value: Int, _ factor: Int) -> Int {
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? .max : product
    }

    /// Memory an encoder takes beyond the image it is given, per pixel of one frame
    /// (``ImageFormat/encodingBytesPerPixel``, measured by `scripts/measure/measure-encoder-memory`).
    static func encodingBytesPerPixel(_ format: ImageFormat) -> Int { format.encodingBytesPerPixel }
}
