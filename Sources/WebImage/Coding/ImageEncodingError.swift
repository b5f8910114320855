/// Why an image could not become data.
///
/// ```swift
/// do { _ = try ImageCoderRegistry.default.encode(image, as: .tiff) }
/// catch ImageEncodingError.unsupportedFormat(let format) { print("cannot write \(format)") }
/// ```
public enum ImageEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No registered encoder writes this format.
    case unsupportedFormat(ImageFormat)
    /// The codec library failed; `reason` is its message.
    case encodingFailed(format: ImageFormat, reason: String)
    /// The format's shared library cannot be loaded here, or `WEBIMAGE_DISABLE_CODECS`
    /// switches it off (see ``ImageDecodingError/libraryUnavailable(format:reason:)``).
    case libraryUnavailable(format: ImageFormat, reason: String)
    /// The task encoding was cancelled (a deadline passed, the caller went away): animations
    /// stop between frames, and what was written is thrown away.
    case cancelled
    /// The worker process of an isolated encode was killed from outside before it answered (see
    /// ``ImageDecodingError/workerKilled(format:)``): trying again may succeed.
    case workerKilled(format: ImageFormat)

    public var description: String {
        switch self {
        case .unsupportedFormat(let format): "no encoder for \(format)"
        case let .encodingFailed(format, reason): "\(format) encoding failed: \(reason)"
        case let .libraryUnavailable(format, reason): "\(format) cannot be encoded here: \(reason)"
        case .cancelled: "encoding was cancelled"
        case .workerKilled(let format): "the worker encoding \(format) was killed before it answered (out of memory, most likely)"
        }
    }
}
