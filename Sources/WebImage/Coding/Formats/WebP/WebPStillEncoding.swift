internal import CWebP
import Foundation

/// A still WebP written with libwebp's full API (`WebPEncode`): the settings of its one-call
/// functions (`WebPEncodeRGBA`: the default preset at `quality`; `WebPEncodeLosslessRGBA`:
/// lossless at 70, exact), plus a progress hook that looks at `Task.isCancelled`, so a render whose
/// deadline passed stops inside the encode (libwebp calls it per macroblock row when lossy and
/// between the passes of its lossless analysis) instead of running to the end: seconds for a
/// lossless 16 MP picture.
enum WebPStillEncoding {
    /// `rgba` (straight alpha, `width × height`) as a WebP file.
    static func encode(_ rgba: [UInt8], width: Int32, height: Int32, quality: Double) throws(ImageEncodingError) -> Data {
        let lossless = quality >= 1
        var config = WebPConfig()
        guard WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, lossless ? 70 : Float(quality * 100)) != 0 else {
            throw .encodingFailed(format: .webp, reason: "libwebp version mismatch")
        }
        if lossless {
            config.lossless = 1
            config.exact = 1
        }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw .encodingFailed(format: .webp, reason: "libwebp version mismatch") }
        defer { WebPPictureFree(&picture) }
        picture.width = width
        picture.height = height
        picture.use_argb = lossless ? 1 : 0
        picture.progress_hook = cancellationHook
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { output -> Bool in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(output)
            return rgba.withUnsafeBufferPointer { src in WebPPictureImportRGBA(&picture, src.baseAddress, width * 4) != 0 }
                && WebPEncode(&config, &picture) != 0
        }
        guard encoded, let bytes = writer.mem else {
            if picture.error_code == VP8_ENC_ERROR_USER_ABORT { throw .cancelled }
            throw .encodingFailed(format: .webp, reason: "libwebp could not encode the image (error \(picture.error_code.rawValue))")
        }
        return Data(bytes: bytes, count: writer.size)
    }

    /// libwebp's progress hook: 0 (stop) once the encoding task is cancelled.
    static let cancellationHook: WebPProgressHook = { _, _ in Task.isCancelled ? 0 : 1 }
}
