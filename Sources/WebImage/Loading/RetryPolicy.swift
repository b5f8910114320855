import Foundation

/// When and how long to wait before trying a failed download again.
///
/// Only transient failures are retried (``ImageDownloadError/isTransient``: timeouts, broken
/// connections, 408, 429 and 5xx), never a 4xx. The delay doubles each time from ``baseDelay``
/// up to ``maxDelay``; a `Retry-After` header on 429 or 503 replaces it (capped by
/// ``maxRetryAfter``).
///
/// ```swift
/// var configuration = ImageDownloaderConfiguration()
/// configuration.retryPolicy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(100))
/// configuration.retryPolicy = .none
/// ```
public struct RetryPolicy: Sendable, Hashable {
    public var maxRetries: Int
    public var baseDelay: Duration
    public var maxDelay: Duration
    public var maxRetryAfter: Duration

    public init(
        maxRetries: Int = 2, baseDelay: Duration = .milliseconds(250),
        maxDelay: Duration = .seconds(5), maxRetryAfter: Duration = .seconds(30)
    ) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// Never retry.
    public static let none = RetryPolicy(maxRetries: 0)

    /// The delay before retry number `attempt` (1-based) after `error`, or `nil` for "give up".
    public func delay(beforeRetry attempt: Int, after error: ImageDownloadError, retryAfter: String?) -> Duration? {
        guard attempt <= maxRetries, error.isTransient, error != .cancelled else { return nil }
        if let retryAfter, let seconds = Self.seconds(fromRetryAfter: retryAfter) {
            return min(.milliseconds(Int64(seconds * 1000)), maxRetryAfter)
        }
        let factor = Int64(1) << Int64(min(attempt - 1, 20))
        return min(baseDelay * factor, maxDelay)
    }

    /// Reads `Retry-After` as seconds or as an HTTP date.
    static func seconds(fromRetryAfter value: String) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return max(0, seconds) }
        return HTTPDate.parse(trimmed).map { max(0, $0.timeIntervalSinceNow) }
    }
}
