import Foundation

/// When and how long to wait before trying a failed download again.
///
/// Only transient failures are retried (``ImageDownloadError/isTransient``: timeouts, broken
/// connections, 408, 429 and 5xx), never a 4xx. The delay doubles each time from ``baseDelay``
/// up to ``maxDelay``; a `Retry-After` header on 429 or 503 replaces it (capped by
/// ``maxRetryAfter``, or — with ``givesUpPastMaxRetryAfter`` — a longer one ends the retries, so
/// the server is not asked before the time it named). `Retry-After` is whole seconds or an HTTP
/// date; anything else (`1e300`, `-1`, `inf`) is ignored and the backoff applies.
///
/// ```swift
/// var configuration = ImageDownloaderConfiguration()
/// configuration.retryPolicy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(100))
/// configuration.retryPolicy = RetryPolicy(maxRetryAfter: .seconds(300), givesUpPastMaxRetryAfter: true)  // a polite crawler
/// configuration.retryPolicy = .none
/// ```
public struct RetryPolicy: Sendable, Hashable {
    public var maxRetries: Int
    public var baseDelay: Duration
    public var maxDelay: Duration
    public var maxRetryAfter: Duration
    /// What a `Retry-After` longer than ``maxRetryAfter`` does: `false` (the default) retries
    /// after ``maxRetryAfter``, sooner than the server asked; `true` gives up (the download fails
    /// with its 429 or 503), as a bulk crawler should.
    public var givesUpPastMaxRetryAfter: Bool
    /// `true`: a 429 or 503 with a valid `Retry-After` is not retried here at all; the download
    /// fails with its status at once and the caller, which can see the header through
    /// ``ImageDownloaderConfiguration/responseModifier``, tries again when the server said, without
    /// a task that sleeps meanwhile (`webimage fetch` parks the line, holding none of its
    /// concurrency slots). Other transient failures are retried as usual. Default `false`.
    public var leavesRetryAfterToTheCaller: Bool

    public init(
        maxRetries: Int = 2, baseDelay: Duration = .milliseconds(250),
        maxDelay: Duration = .seconds(5), maxRetryAfter: Duration = .seconds(30), givesUpPastMaxRetryAfter: Bool = false,
        leavesRetryAfterToTheCaller: Bool = false
    ) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.givesUpPastMaxRetryAfter = givesUpPastMaxRetryAfter
        self.leavesRetryAfterToTheCaller = leavesRetryAfterToTheCaller
    }

    /// Never retry.
    public static let none = RetryPolicy(maxRetries: 0)

    /// The delay before retry number `attempt` (1-based) after `error`, or `nil` for "give up".
    public func delay(beforeRetry attempt: Int, after error: ImageDownloadError, retryAfter: String?) -> Duration? {
        guard attempt <= maxRetries, error.isTransient, error != .cancelled else { return nil }
        if case .overMemoryBudget = error { return nil }  // it already waited for room
        if let retryAfter, let seconds = HTTPHeaderValue.retryAfterSeconds(retryAfter) {
            if givesUpPastMaxRetryAfter, seconds > maxRetryAfter.seconds { return nil }
            if leavesRetryAfterToTheCaller { return nil }
            return HTTPHeaderValue.retryAfter(retryAfter, limit: maxRetryAfter)
        }
        let factor = Int64(1) << Int64(min(attempt - 1, 20))
        return min(baseDelay * factor, maxDelay)
    }
}
