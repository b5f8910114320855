internal import CWebP
import Foundation

/// Animated WebP through libwebp's `WebPAnimDecoder` (libwebpdemux) and `WebPAnimEncoder`
/// (libwebpmux); the animated half of ``WebPCoder``.
enum WebPAnimation {
    /// Composited frames; the pixel limit has been checked by the caller from `header`.
    static func decode(_ data: Data, header: ImageHeader, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        var frames = try WebPAnimationFrames(PinnedBytes(copying: data), options: options)
        guard frames.canvasWidth == header.pixelWidth, frames.canvasHeight == header.pixelHeight else {
            throw .corrupt(format: .webp, reason: "invalid animation canvas")
        }
        let decoded = try frames.frames(limit: options.framesToDecode(of: header.frameCount))
        guard !decoded.isEmpty else { throw .corrupt(format: .webp, reason: "animation without frames") }
        return Image.decoded(
            format: .webp, pixelWidth: frames.targetSize.width, pixelHeight: frames.targetSize.height, frames: decoded,
            frameCount: header.frameCount, loopCount: frames.loopCount, scale: options.scale)
    }

    /// The longest frame duration WebP stores: 24 bits of milliseconds (`ANMF`), about 4 h 40 min.
    static let maxFrameMilliseconds = 0xFF_FFFF

    /// An animated WebP of `image.frames`: lossless at `quality >= 1`, else lossy.
    ///
    /// Each frame's duration is clamped to 0…``maxFrameMilliseconds`` (longer ones would be split
    /// by libwebp into extra frames); libwebp takes frame start times as C `int` milliseconds, so
    /// an animation lasting longer than `Int32.max` ms (24.8 days) in all is refused with
    /// ``ImageEncodingError/encodingFailed(format:reason:)`` before any frame is encoded.
    static func encode(_ image: Image, quality: Double) throws(ImageEncodingError) -> Data {
        let (width, height) = try WebPCoder.encodableSize(image)
        let timestamps = try startTimes(image.frames.map(\.duration))
        var encoderOptions = WebPAnimEncoderOptions()
        var config = WebPConfig()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0, WebPConfigInit(&config) != 0 else {
            throw .encodingFailed(format: .webp, reason: "libwebp version mismatch")
        }
        encoderOptions.anim_params.loop_count = Int32(min(max(image.loopCount, 0), 65_535))
        config.lossless = quality >= 1 ? 1 : 0
        config.quality = Float(try EncodingQuality.unit(quality, format: .webp) * 100)
        guard let encoder = WebPAnimEncoderNew(width, height, &encoderOptions) else {
            throw .encodingFailed(format: .webp, reason: "cannot create the animation encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        for index in image.frames.indices {
            guard !Task.isCancelled else { throw .cancelled }
            let rgba = PixelOperations.unpremultiplied(image.frame(at: index))
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw .encodingFailed(format: .webp, reason: "libwebp version mismatch") }
            picture.width = width
            picture.height = height
            picture.use_argb = 1
            let added = rgba.withUnsafeBufferPointer { src in
                WebPPictureImportRGBA(&picture, src.baseAddress, width * 4) != 0
                    && WebPAnimEncoderAdd(encoder, &picture, timestamps[index], &config) != 0
            }
            WebPPictureFree(&picture)
            guard added else { throw failure(encoder) }
        }
        var output = WebPData()
        guard WebPAnimEncoderAdd(encoder, nil, timestamps[image.frames.count], nil) != 0,
              WebPAnimEncoderAssemble(encoder, &output) != 0 else { throw failure(encoder) }
        defer { WebPDataClear(&output) }
        return Data(bytes: output.bytes, count: output.size)
    }

    /// Each frame's start in milliseconds, then the end of the last: durations clamped to
    /// 0…``maxFrameMilliseconds``, the total at most `Int32.max`.
    static func startTimes(_ durations: [Duration]) throws(ImageEncodingError) -> [Int32] {
        var times: [Int32] = [0]
        times.reserveCapacity(durations.count + 1)
        var total = 0
        for duration in durations {
            total += duration.wholeMilliseconds(clampedTo: 0...maxFrameMilliseconds)  // ≤ count · 2²⁴: no overflow
            guard let time = Int32(exactly: total) else {
                throw .encodingFailed(
                    format: .webp,
                    reason: "the animation lasts over \(Int32.max) ms (24.8 days), longer than libwebp's timestamps hold")
            }
            times.append(time)
        }
        return times
    }

    private static func failure(_ encoder: OpaquePointer) -> ImageEncodingError {
        .encodingFailed(format: .webp, reason: WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "libwebp error")
    }
}
