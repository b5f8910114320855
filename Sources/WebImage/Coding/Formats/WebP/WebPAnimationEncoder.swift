internal import CWebP
public import Foundation

/// An animated WebP written one frame at a time: the ``AnimatedImageEncoding`` of ``WebPCoder``,
/// over libwebp's `WebPAnimEncoder` (lossless at quality 1, else lossy).
///
/// libwebp compresses each frame as it is added and keeps the previous canvas and its candidate
/// sub-frames, not the frames; the frames' compressed data make up the file when
/// ``finish()`` assembles it. Each duration is clamped to 0…``maxFrameMilliseconds`` (longer ones
/// would be split by libwebp into extra frames); libwebp takes frame start times as C `int`
/// milliseconds, so a frame that would start or end past `Int32.max` ms (24.8 days) is refused
/// with ``ImageEncodingError/encodingFailed(format:reason:)``.
///
/// ```swift
/// let encoder = try WebPAnimationEncoder(AnimationEncodingParameters(pixelWidth: 2, pixelHeight: 2, loopCount: 0, quality: 0.8))
/// try encoder.add(ImageFrame(pixels: red, duration: .milliseconds(100)))
/// let webp = try encoder.finish()
/// ```
public final class WebPAnimationEncoder: AnimatedImageEncoding {
    /// The longest frame duration WebP stores: 24 bits of milliseconds (`ANMF`), about 4 h 40 min.
    public static let maxFrameMilliseconds = 0xFF_FFFF

    public let format = ImageFormat.webp
    public private(set) var frameCount = 0
    private let parameters: AnimationEncodingParameters
    private let width: Int32, height: Int32
    private var config = WebPConfig()
    private var encoder: OpaquePointer?
    /// Where the next frame starts, in milliseconds.
    private var timestamp: Int32 = 0

    public init(_ parameters: AnimationEncodingParameters) throws(ImageEncodingError) {
        try parameters.checkSides(.webp, maxSide: WebPCoder.maxSide)
        (width, height) = (Int32(parameters.pixelWidth), Int32(parameters.pixelHeight))  // 1…16383
        self.parameters = parameters
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0, WebPConfigInit(&config) != 0 else {
            throw .encodingFailed(format: .webp, reason: "libwebp version mismatch")
        }
        options.anim_params.loop_count = Int32(min(max(parameters.loopCount, 0), 65_535))
        config.lossless = parameters.quality >= 1 ? 1 : 0
        config.quality = Float(try EncodingQuality.unit(parameters.quality, format: .webp) * 100)
        guard let encoder = WebPAnimEncoderNew(width, height, &options) else {
            throw .encodingFailed(format: .webp, reason: "cannot create the animation encoder")
        }
        self.encoder = encoder
    }

    deinit {
        if let encoder { WebPAnimEncoderDelete(encoder) }
    }

    public func add(_ frame: ImageFrame) throws(ImageEncodingError) {
        guard !Task.isCancelled else { throw .cancelled }
        guard let encoder else { throw .encodingFailed(format: .webp, reason: "the file is finished") }
        if let problem = frame.encodingProblem(parameters) { throw .encodingFailed(format: .webp, reason: problem) }
        let end = try Self.end(of: frame.duration, startingAt: timestamp)
        let still = Image(
            format: .webp, pixelWidth: parameters.pixelWidth, pixelHeight: parameters.pixelHeight, pixels: frame.pixels, isOpaque: false)
        let rgba = try PixelOperations.unpremultipliedStoppable(still)
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw .encodingFailed(format: .webp, reason: "libwebp version mismatch") }
        picture.width = width
        picture.height = height
        picture.use_argb = 1
        picture.progress_hook = WebPStillEncoding.cancellationHook  // kept in the encoder's copies of the frame
        let start = timestamp
        let added = rgba.withUnsafeBufferPointer { src in
            WebPPictureImportRGBA(&picture, src.baseAddress, Int32(width) * 4) != 0
                && WebPAnimEncoderAdd(encoder, &picture, start, &config) != 0
        }
        WebPPictureFree(&picture)
        guard added else { throw Task.isCancelled ? .cancelled : Self.failure(encoder) }
        timestamp = end
        frameCount += 1
    }

    public func finish() throws(ImageEncodingError) -> Data {
        guard let encoder else { throw .encodingFailed(format: .webp, reason: "the file is finished") }
        guard frameCount > 0 else { throw .encodingFailed(format: .webp, reason: "no frames") }
        defer {
            WebPAnimEncoderDelete(encoder)
            self.encoder = nil
        }
        var output = WebPData()
        guard WebPAnimEncoderAdd(encoder, nil, timestamp, nil) != 0, WebPAnimEncoderAssemble(encoder, &output) != 0 else {
            throw Self.failure(encoder)
        }
        defer { WebPDataClear(&output) }
        return Data(bytes: output.bytes, count: output.size)
    }

    /// When a frame of `duration` (clamped to 0…``maxFrameMilliseconds``) starting at `start` ends;
    /// refused past `Int32.max`.
    static func end(of duration: Duration, startingAt start: Int32) throws(ImageEncodingError) -> Int32 {
        let total = Int(start) + duration.wholeMilliseconds(clampedTo: 0...maxFrameMilliseconds)  // < 2³², no overflow
        guard let end = Int32(exactly: total) else {
            throw .encodingFailed(
                format: .webp, reason: "the animation lasts over \(Int32.max) ms (24.8 days), longer than libwebp's timestamps hold")
        }
        return end
    }

    private static func failure(_ encoder: OpaquePointer) -> ImageEncodingError {
        .encodingFailed(format: .webp, reason: WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "libwebp error")
    }
}
