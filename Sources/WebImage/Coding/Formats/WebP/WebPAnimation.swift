internal import CWebP
import Foundation

/// Animated WebP through libwebp's `WebPAnimDecoder` (libwebpdemux) and `WebPAnimEncoder`
/// (libwebpmux); the animated half of ``WebPCoder``.
enum WebPAnimation {
    /// Composited frames; the pixel limit has been checked by the caller from `header`.
    static func decode(_ data: Data, header: ImageHeader, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let limit = options.firstFrameOnly ? 1 : header.frameCount
        let sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
        let result = data.withUnsafeBytes { src -> Result<(frames: [ImageFrame], loop: Int), ImageDecodingError> in
            var decoderOptions = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else {
                return .failure(.corrupt(format: .webp, reason: "libwebp version mismatch"))
            }
            decoderOptions.color_mode = MODE_RGBA
            decoderOptions.use_threads = 0
            var input = WebPData(bytes: src.baseAddress?.assumingMemoryBound(to: UInt8.self), size: src.count)
            guard let decoder = WebPAnimDecoderNew(&input, &decoderOptions) else {
                return .failure(.corrupt(format: .webp, reason: "invalid animation"))
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
                  Int(info.canvas_width) == header.pixelWidth, Int(info.canvas_height) == header.pixelHeight else {
                return .failure(.corrupt(format: .webp, reason: "invalid animation canvas"))
            }
            let byteCount = header.pixelWidth * header.pixelHeight * 4
            var frames: [ImageFrame] = []
            var previous: Int32 = 0
            while frames.count < limit, WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var buffer: UnsafeMutablePointer<UInt8>?
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
                    return .failure(.corrupt(format: .webp, reason: "frame \(frames.count) does not decode"))
                }
                var pixels = Array(UnsafeBufferPointer(start: buffer, count: byteCount))
                _ = PixelOperations.premultiply(&pixels)
                frames.append(ImageFrame(
                    pixels: sizing.shrink(pixels), duration: ImageFrame.clampedDuration(milliseconds: Int(timestamp - previous))))
                previous = timestamp
            }
            guard !frames.isEmpty else { return .failure(.corrupt(format: .webp, reason: "animation without frames")) }
            return .success((frames, Int(info.loop_count)))
        }
        let (frames, loop) = try result.get()
        return Image.decoded(
            format: .webp, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
            frameCount: header.frameCount, loopCount: loop, scale: options.scale)
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
