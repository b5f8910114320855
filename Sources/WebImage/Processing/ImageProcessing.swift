/// Turns one decoded image into another: resize, crop, round, blur, …
///
/// A processor's ``identifier`` names it and its parameters; the pipeline puts the identifiers of
/// a request's processors into the image key, so a processed variant is cached apart from the
/// original and from every other variant, and a variant found in a cache is not processed again.
/// Two processors with the same identifier must produce the same pixels.
///
/// ```swift
/// struct Sepia: ImageProcessing {
///     var identifier: String { "com.example.sepia" }
///     func process(_ image: Image) throws(ImageProcessingError) -> Image { … }
/// }
/// let thumbnail = try image.processed(by: [.resize(width: 256, height: 256), Sepia()])
/// ```
public protocol ImageProcessing: Sendable {
    /// A stable name for this processor and its parameters, used in cache keys.
    var identifier: String { get }
    /// Processes one still image (one frame of an animation; see ``Image/processed(by:animated:)``).
    func process(_ image: Image) throws(ImageProcessingError) -> Image
    /// The size of the result for an image of `width × height`, worked out without pixels: how
    /// a server prices a request before it decodes anything. The default is the same size; a
    /// processor that changes the size says what it becomes (an upper bound will do).
    ///
    /// ```swift
    /// ImageProcessors.Resize(width: 256, height: 256).outputSize(width: 4000, height: 3000)  // (256, 192)
    /// ```
    func outputSize(width: Int, height: Int) -> (width: Int, height: Int)
    /// Bytes the step holds while it runs, beyond its input and its result, for an input of
    /// `width × height`: a server adds them to a render's price. The default is none; a blur
    /// needs a second full-size buffer.
    ///
    /// ```swift
    /// ImageProcessors.GaussianBlur(radius: 4).workingBytes(width: 1000, height: 1000)  // 4_000_000
    /// ```
    func workingBytes(width: Int, height: Int) -> Int
}

extension ImageProcessing {
    public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) { (width, height) }
    public func workingBytes(width: Int, height: Int) -> Int { 0 }
}

/// Why a processor could not produce an image.
public enum ImageProcessingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A parameter makes no sense for this image (a crop outside it, a size of zero, …).
    case invalidParameter(processor: String, reason: String)
    /// A processor spec string (`resize:256x256:fill,round:12`) could not be parsed.
    case invalidSpec(part: String, reason: String)
    /// The result would exceed the pixel limit.
    case tooLarge(width: Int, height: Int)
    /// The task processing the image was cancelled (a deadline passed, the caller went away):
    /// work stopped between steps, frames or rows, and its partial result was thrown away.
    case cancelled

    public var description: String {
        switch self {
        case let .invalidParameter(processor, reason): "\(processor): \(reason)"
        case let .invalidSpec(part, reason): "bad processing spec '\(part)': \(reason)"
        case let .tooLarge(width, height): "processed image would be \(width) × \(height) pixels, over the limit"
        case .cancelled: "processing was cancelled"
        }
    }
}

extension Image {
    /// The image after `processors`, in order. An animation is processed frame by frame when
    /// `animated` is true (the pipeline's `transformAnimatedImage` option), keeping every frame's
    /// duration and the loop count; otherwise its first frame is processed and the result is a
    /// still image. Processors see the picture upright: an EXIF ``orientation`` is applied first.
    ///
    /// Cancelling the task that processes stops the work within a few rows (the built-in
    /// processors look at `Task.isCancelled` between rows, every step and every frame) and
    /// throws ``ImageProcessingError/cancelled``: a deadline frees its core at once.
    ///
    /// ```swift
    /// let avatar = try image.processed(by: [.resize(width: 96, height: 96, mode: .fill), .circle()])
    /// ```
    public func processed(by processors: [any ImageProcessing], animated: Bool = false) throws(ImageProcessingError) -> Image {
        guard !processors.isEmpty else { return self }
        let upright = try orientedStoppingWhenCancelled()
        guard animated, upright.frames.count > 1 else {
            var image = upright.frames.count > 1 ? upright.frame(at: 0) : upright
            for processor in processors { image = try Self.step(processor, image) }
            return image
        }
        // Every processed frame is kept: the result's pixels over all frames stay within the
        // limit a decode has (a 20-frame GIF enlarged to 7000 × 7000 would be 980 MP), checked
        // from the steps' sizes before any frame is processed.
        try ImageProcessors.checkAnimation(
            ImageProcessors.outputSize(of: processors, width: upright.pixelWidth, height: upright.pixelHeight), frames: upright.frames.count)
        var processedFrames: [ImageFrame] = []
        processedFrames.reserveCapacity(upright.frames.count)
        var first: Image?
        var opaque = true
        for index in upright.frames.indices {
            var frame = upright.frame(at: index)
            for processor in processors { frame = try Self.step(processor, frame) }
            // Processors give packed rows, but a custom one might not: frames must be packed.
            let pixels = frame.packedPixels
            if let first, frame.pixelWidth != first.pixelWidth || frame.pixelHeight != first.pixelHeight {
                throw .invalidParameter(
                    processor: processors.map(\.identifier).joined(separator: ","), reason: "frames changed size unevenly")
            }
            processedFrames.append(ImageFrame(pixels: pixels, duration: upright.frames[index].duration))
            opaque = opaque && frame.isOpaque
            if first == nil { first = frame }
        }
        guard var result = first else { return self }
        result.pixels = processedFrames[0].pixels
        result.bytesPerRow = result.pixelWidth * 4
        result.frames = processedFrames
        result.frameCount = processedFrames.count
        result.loopCount = loopCount
        result.isOpaque = opaque
        return result
    }

    /// One processor's work, refused before it starts and thrown away after it ends when the
    /// task was cancelled (processors that stop early return an unfinished picture).
    private static func step(_ processor: any ImageProcessing, _ image: Image) throws(ImageProcessingError) -> Image {
        guard !Task.isCancelled else { throw .cancelled }
        let result = try processor.process(image)
        guard !Task.isCancelled else { throw .cancelled }
        return result
    }
}
