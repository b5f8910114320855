internal import CWebP
import Foundation

/// Animated WebP: frames through libwebp's demuxer and incremental decoder
/// (``WebPAnimationFrames``), encoding through `WebPAnimEncoder` (libwebpmux, in
/// ``WebPAnimationEncoder``); the animated half of ``WebPCoder``.
enum WebPAnimation {
    /// Composited frames; the pixel limit has been checked by the caller from `header`.
    static func decode(_ data: Data, header: ImageHeader, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try PinnedBytes.borrowing(data) { bytes throws(ImageDecodingError) in try decode(bytes, header: header, options: options) }
    }

    private static func decode(_ bytes: PinnedBytes, header: ImageHeader, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        var frames = try WebPAnimationFrames(bytes, options: options)
        guard frames.canvasWidth == header.pixelWidth, frames.canvasHeight == header.pixelHeight else {
            throw .corrupt(format: .webp, reason: "invalid animation canvas")
        }
        let decoded = try frames.frames(limit: options.framesToDecode(of: header.frameCount))
        guard !decoded.isEmpty else { throw .corrupt(format: .webp, reason: "animation without frames") }
        return Image.decoded(
            format: .webp, pixelWidth: frames.targetSize.width, pixelHeight: frames.targetSize.height, frames: decoded,
            frameCount: header.frameCount, loopCount: frames.loopCount, scale: options.scale)
    }

    /// An animated WebP of `image.frames`: lossless at `quality >= 1`, else lossy (see
    /// ``WebPAnimationEncoder``). An animation lasting longer than `Int32.max` ms (24.8 days) in
    /// all is refused before any frame is encoded.
    static func encode(_ image: Image, quality: Double) throws(ImageEncodingError) -> Data {
        var end: Int32 = 0
        for frame in image.frames { end = try WebPAnimationEncoder.end(of: frame.duration, startingAt: end) }
        let encoder = try WebPAnimationEncoder(AnimationEncodingParameters(
            pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight, loopCount: image.loopCount, quality: quality))
        return try encoder.encodeFrames(of: image)
    }
}
