/// Why data could not become an image (encoding has ``ImageEncodingError``).
public enum ImageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data is empty.
    case empty
    /// No registered coder handles these bytes (`format` is what sniffing found, if anything).
    case unsupportedFormat(ImageFormat?)
    /// The header declares more pixels than the configured limit allows.
    case tooManyPixels(width: Int, height: Int, frames: Int, limit: Int)
    /// The codec library rejected the data; `reason` is its message.
    case corrupt(format: ImageFormat, reason: String)
    /// The file breaks its format's rules in a way a lenient decode forgives (see
    /// ``ImageRepairs``), and ``ImageDecodingOptions/strict`` is set.
    case refusedInStrictMode(format: ImageFormat, repairs: ImageRepairs, reason: String)
    /// The format's shared library (libavif, libheif, libjxl: opened on first use) cannot be
    /// loaded here, or `WEBIMAGE_DISABLE_CODECS` switches it off; `reason` says which.
    case libraryUnavailable(format: ImageFormat, reason: String)
    /// The task decoding was cancelled (a deadline passed, the caller went away); animations
    /// and multi-page files stop between frames, and what was decoded is thrown away.
    case cancelled
    /// The worker process of an isolated decode (``DecodeIsolation``) was killed from outside
    /// before it answered: by the kernel's out-of-memory killer, most likely, which a worker asks
    /// to choose it before the process it serves. The data is not at fault, so the failure is not
    /// remembered (``FailedURLList``) and a server answers `503`: trying again may succeed.
    case workerKilled(format: ImageFormat)

    public var description: String {
        switch self {
        case .empty:
            "image data is empty"
        case .unsupportedFormat(let format):
            if let format { "no decoder for \(format) data" } else { "data is not in a recognised image format" }
        case let .tooManyPixels(width, height, frames, limit):
            "image is \(width)×\(height)\(frames > 1 ? " × \(frames) frames" : ""), over the limit of \(limit) pixels"
        case let .corrupt(format, reason):
            "corrupt \(format) data: \(reason)"
        case let .refusedInStrictMode(format, repairs, reason):
            "\(format) data refused in strict mode (\(repairs.names.joined(separator: ", "))): \(reason)"
        case let .libraryUnavailable(format, reason):
            "\(format) cannot be decoded here: \(reason)"
        case .cancelled:
            "decoding was cancelled"
        case .workerKilled(let format):
            "the worker decoding \(format) data was killed before it answered (out of memory, most likely)"
        }
    }
}

extension ImageDecodingError {
    /// Whether the data itself is at fault, whatever the request's options: it is empty, in no
    /// known format, or broken. Only then is a cached copy removed or the URL remembered as
    /// failed; a cancel, a killed worker, a missing library, a pixel limit or strict mode says
    /// nothing against the bytes, which another request may decode.
    var blamesData: Bool {
        switch self {
        case .empty, .unsupportedFormat, .corrupt: true
        case .tooManyPixels, .refusedInStrictMode, .libraryUnavailable, .cancelled, .workerKilled: false
        }
    }
}
