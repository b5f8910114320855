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

    /// An animated WebP of `image.frames`: lossless at `quality >= 1`, else lossy.
    static func encode(_ image: Image, quality: Double) throws(ImageEncodingError) -> Data {
        var encoderOptions = WebPAnimEncoderOptions()
        var config = WebPConfig()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0, WebPConfigInit(&config) != 0 else {
            throw .encodingFailed(format: .webp, reason: "libwebp version mismatch")
        }
        encoderOptions.anim_params.loop_count = Int32(min(max(image.loopCount, 0), 65_535))
        config.lossless = quality >= 1 ? 1 : 0
        config.quality = Float(min(max(quality, 0), 1) * 100)
        let width = Int32(image.pixelWidth), height = Int32(image.pixelHeight)
        guard let encoder = WebPAnimEncoderNew(width, height, &encoderOptions) else {
            throw .encodingFailed(format: .webp, reason: "cannot create the animation encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var timestamp = 0
        for index in image.frames.indices {
            let rgba = PixelOperations.unpremultiplied(image.frame(at: index))
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw .encodingFailed(format: .webp, reason: "libwebp version mismatch") }
            picture.width = width
            picture.height = height
            picture.use_argb = 1
            let added = rgba.withUnsafeBufferPointer { src in
                WebPPictureImportRGBA(&picture, src.baseAddress, width * 4) != 0
                    && WebPAnimEncoderAdd(encoder, &picture, Int32(timestamp), &config) != 0
            }
            WebPPictureFree(&picture)
            guard added else { throw failure(encoder) }
            timestamp += Int(image.frames[index].duration / .milliseconds(1))
        }
        var output = WebPData()
        guard WebPAnimEncoderAdd(encoder, nil, Int32(timestamp), nil) != 0,
              WebPAnimEncoderAssemble(encoder, &output) != 0 else { throw failure(encoder) }
        defer { WebPDataClear(&output) }
        return Data(bytes: output.bytes, count: output.size)
    }

    private static func failure(_ encoder: OpaquePointer) -> ImageEncodingError {
        .encodingFailed(format: .webp, reason: WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "libwebp error")
    }
}
