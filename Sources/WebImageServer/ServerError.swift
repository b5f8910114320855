import Foundation
import WebImage

/// Why `/img` did not answer with an image: a stable code, an HTTP status and a message fit to
/// show to the caller (never an internal path or a stack).
///
/// | status | codes |
/// |---|---|
/// | 400 | `bad_parameter`, `invalid_url` |
/// | 403 | `bad_signature`, `source_not_allowed`, `address_refused` |
/// | 404 | `source_not_found` |
/// | 413 | `source_too_large`, `too_many_pixels` |
/// | 415 | `not_an_image` |
/// | 422 | `undecodable`, `unprocessable` |
/// | 429 | `busy` |
/// | 499 | `client_closed` (the client left first; logged and counted, seldom received) |
/// | 503 | `over_budget`, `worker_killed` |
/// | 502 | `source_error` |
/// | 504 | `source_timeout`, `processing_timeout` |
public struct ImageServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String

    /// The longest message answered, in characters: a message quotes a stranger's parameter
    /// value, which may be kilobytes (a 14 KB `process=` came back whole in a `400` that caches
    /// keep; red team, stop 53).
    public static let maxMessageLength = 300

    /// `message` longer than ``maxMessageLength`` is cut there, with `…`.
    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message.count > Self.maxMessageLength ? message.prefix(Self.maxMessageLength) + "…" : message
    }

    public var description: String { "\(status) \(code): \(message)" }

    static func badParameter(_ message: String) -> Self { .init(status: 400, code: "bad_parameter", message: message) }
    static let busy = Self(status: 429, code: "busy", message: "too many images are being rendered; try again shortly")
    static let clientClosed = Self(status: 499, code: "client_closed", message: "the client closed the connection before the image was ready")
    static let processingTimeout = Self(status: 504, code: "processing_timeout", message: "rendering the image took too long")
    static let overBudget = Self(status: 503, code: "over_budget", message: "the server has no memory free for this image now; try again shortly")
    static let workerKilled = Self(status: 503, code: "worker_killed", message: "the process rendering the image was stopped (the server is short of memory); try again shortly")

    /// The server's answer to a pipeline failure.
    init(_ error: ImagePipelineError) {
        switch error {
        case .loadingFailed(let download): self.init(download)
        case .decodingFailed(let decoding): self.init(decoding)
        case .processingFailed(let processing):
            self.init(status: 422, code: "unprocessable", message: processing.description)
        case .notCached, .cancelled:
            self.init(status: 502, code: "source_error", message: "the source could not be fetched")
        case .overBudget:
            self = .overBudget
        }
    }

    init(_ error: ImageDownloadError) {
        switch error {
        case .badStatusCode(let code) where code == 404 || code == 410:
            self.init(status: 404, code: "source_not_found", message: "the source answered \(code)")
        case .badStatusCode(let code):
            self.init(status: 502, code: "source_error", message: "the source answered \(code)")
        case .tooLarge(let limit, _):
            self.init(status: 413, code: "source_too_large", message: "the source is larger than \(limit) bytes")
        case .timedOut:
            self.init(status: 504, code: "source_timeout", message: "the source did not answer in time")
        case .invalidURL:
            self.init(status: 400, code: "invalid_url", message: "the source URL cannot be fetched")
        case .transport(let underlying as AddressRefusal):
            self.init(status: 403, code: "address_refused", message: underlying.description)
        case .transport(let underlying as LocalSourceError):
            let answer = underlying.answer
            self.init(status: answer.status, code: answer.code, message: answer.message)
        case .transport(let underlying as S3SourceError):
            let answer = underlying.answer
            self.init(status: answer.status, code: answer.code, message: answer.message)
        case .transport(let underlying as SourceRefusal):
            self.init(status: 403, code: "source_not_allowed", message: underlying.description)
        case .invalidHeader(let name, _):
            self.init(status: 502, code: "source_error", message: "the source sent an invalid \(name) header")
        case .tooManyRedirects:
            self.init(status: 502, code: "source_error", message: "the source redirected too often")
        case .emptyBody:
            self.init(status: 422, code: "undecodable", message: "the source is empty")
        case .badContentType(let type):
            self.init(status: 415, code: "not_an_image", message: "the source is \(type), not an image")
        default:
            // Transport details (addresses, library errors) stay in the log.
            self.init(status: 502, code: "source_error", message: "the source could not be fetched")
        }
    }

    init(_ error: ImageDecodingError) {
        switch error {
        case .unsupportedFormat(let format):
            self.init(status: 415, code: "not_an_image", message: format.map { "\($0) sources are not supported" } ?? "the source is not an image")
        case let .tooManyPixels(width, height, frames, limit):
            self.init(status: 413, code: "too_many_pixels",
                      message: "the source is \(width)×\(height)\(frames > 1 ? " × \(frames) frames" : ""), over the limit of \(limit) pixels")
        case .empty:
            self.init(status: 422, code: "undecodable", message: "the source is empty")
        case .corrupt(let format, _), .refusedInStrictMode(let format, _, _):
            self.init(status: 422, code: "undecodable", message: "the source is not a decodable \(format) image")
        case .libraryUnavailable(let format, _):
            // Switched off or not installed on this server: like an unsupported format; the
            // library's message stays in the log.
            self.init(status: 415, code: "not_an_image", message: "\(format) sources are not supported here")
        case .cancelled:
            self = .processingTimeout
        case .workerKilled:
            self = .workerKilled
        }
    }

    /// The answer to an encoder's failure: a cancel is the deadline's, a killed worker the
    /// machine's memory, the rest the image's (`422`).
    init(_ error: ImageEncodingError, writing format: ImageFormat) {
        switch error {
        case .cancelled: self = .processingTimeout
        case .workerKilled: self = .workerKilled
        case .unsupportedFormat, .encodingFailed, .libraryUnavailable:
            self.init(status: 422, code: "unprocessable", message: "the image cannot be written as \(format)")
        }
    }

        /// `{"error": CODE, "message": …}`.
    var json: Data {
        struct Body: Encodable { var error: String; var message: String }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(Body(error: code, message: message))) ?? Data("{\"error\":\"internal\"}".utf8)
    }
}
