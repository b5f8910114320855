import Foundation

/// Why a download failed. Every case has a readable ``description``.
///
/// ``isTransient`` separates failures worth retrying (timeouts, dropped connections, 5xx,
/// 429) from permanent ones (4xx, bad content): the pipeline's failed-URL list only
/// remembers permanent failures.
public enum ImageDownloadError: Error, Sendable, CustomStringConvertible {
    /// The URL cannot be requested (no scheme or host, unsupported scheme).
    case invalidURL(String)
    /// The status code is outside the acceptable set.
    case badStatusCode(Int)
    /// The `Content-Type` is not one of the acceptable types.
    case badContentType(String)
    /// The server answered with an empty body.
    case emptyBody
    /// The body is (or declares itself) larger than the limit.
    case tooLarge(limit: Int, declared: Int?)
    /// The request did not complete in time.
    case timedOut
    /// Redirects exceeded the limit or looped.
    case tooManyRedirects
    /// The caller cancelled.
    case cancelled
    /// The connection failed or broke; `underlying` is the transport's error.
    case transport(underlying: any Error)
    /// A two-stage look-up answered, but its answer names no image URL (permanent).
    case resolverFailed(String)
    /// A two-stage look-up request failed (its status, timeout or connection); transient or
    /// permanent as the underlying failure is.
    indirect case lookupFailed(ImageDownloadError)
    /// The request modifier refused to send the request.
    case requestRefused
    /// A response header the download depends on cannot be used (a `Content-Length` that is
    /// no number or disagrees with itself, a `Content-Range` out of order or past `Int.max`):
    /// the response is refused rather than guessed at (permanent).
    case invalidHeader(name: String, value: String)
    /// The memory budget had no room for the body within the wait allowed (transient: it depends
    /// on what else the process holds, not on the URL; not retried by the downloader).
    case overMemoryBudget(requested: Int, limit: Int)

    public var description: String {
        switch self {
        case .invalidURL(let url): "invalid URL: \(url)"
        case .badStatusCode(let code): "bad HTTP status \(code)"
        case .badContentType(let type): "unacceptable content type \(type)"
        case .emptyBody: "the response body is empty"
        case let .tooLarge(limit, declared):
            if let declared { "the body is \(declared) bytes, over the limit of \(limit)" } else { "the body exceeds the limit of \(limit) bytes" }
        case .timedOut: "the request timed out"
        case .tooManyRedirects: "too many redirects (or a redirect loop)"
        case .cancelled: "the download was cancelled"
        case .transport(let error): "transport failure: \(error)"
        case .resolverFailed(let reason): "URL look-up failed: \(reason)"
        case .lookupFailed(let underlying): "URL look-up failed: \(underlying)"
        case .requestRefused: "the request modifier refused the request"
        case let .invalidHeader(name, value): "the response has an invalid \(name) header '\(value.prefix(64))'"
        case let .overMemoryBudget(requested, limit): "no room for a body of \(requested) bytes in the memory budget of \(limit) bytes"
        }
    }

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .cancelled, .overMemoryBudget: true
        case .transport(let underlying): !TransportFailure.isPermanent(underlying)
        case .badStatusCode(let code): code == 408 || code == 429 || code >= 500
        case .lookupFailed(let underlying): underlying.isTransient
        default: false
        }
    }
}

extension ImageDownloadError: Equatable {
    /// Errors compare by case and payload; transport errors compare by description.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.transport(let a), .transport(let b)): String(describing: a) == String(describing: b)
        case (.lookupFailed(let a), .lookupFailed(let b)): a == b
        default: lhs.description == rhs.description
        }
    }
}

extension ImageDownloadError {
    /// A short, stable label for metrics dimensions.
    var metricReason: String {
        switch self {
        case .invalidURL: "invalid_url"
        case .badStatusCode: "status"
        case .badContentType: "content_type"
        case .emptyBody: "empty"
        case .tooLarge: "too_large"
        case .timedOut: "timeout"
        case .tooManyRedirects: "redirects"
        case .cancelled: "cancelled"
        case .transport: "transport"
        case .resolverFailed, .lookupFailed: "resolver"
        case .requestRefused: "refused"
        case .invalidHeader: "invalid_header"
        case .overMemoryBudget: "memory"
        }
    }
}
