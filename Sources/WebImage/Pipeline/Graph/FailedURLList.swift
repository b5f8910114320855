import Foundation

/// URLs whose last load failed for good (404, 410, undecodable data): they fail at once, without
/// a request, until their time-to-live passes or a request asks for ``ImageLoadingOptions/retryFailed``
/// — SDWebImage's failed-URL list, and the negative caching of an HTTP cache. Timeouts,
/// cancellations and 5xx are never remembered. Bounded: the oldest entry goes first.
///
/// ```swift
/// let failed = FailedURLList(timeToLive: .seconds(60))
/// failed.remember(.loadingFailed(.badStatusCode(404)), for: key)
/// failed.error(for: key)   // the 404 again, for 60 seconds
/// ```
public final class FailedURLList: Sendable {
    public let timeToLive: Duration
    public let capacity: Int
    private struct Entry { var error: ImagePipelineError; var until: ContinuousClock.Instant }
    private let entries = Locked<[String: Entry]>([:])

    public init(timeToLive: Duration = .seconds(60), capacity: Int = 1000) {
        self.timeToLive = timeToLive
        self.capacity = max(1, capacity)
    }

    /// The remembered error for `key`, if it has not expired.
    public func error(for key: String, now: ContinuousClock.Instant = .now) -> ImagePipelineError? {
        entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if entry.until <= now { entries[key] = nil; return nil }
            return entry.error
        }
    }

    /// Remembers `error` when it is permanent; other errors are ignored.
    public func remember(_ error: ImagePipelineError, for key: String, now: ContinuousClock.Instant = .now) {
        guard error.isPermanent, timeToLive > .zero else { return }
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil {
                // Drop the expired, else the one expiring first (they were added in TTL order).
                entries = entries.filter { $0.value.until > now }
                if entries.count >= capacity, let oldest = entries.min(by: { $0.value.until < $1.value.until })?.key {
                    entries[oldest] = nil
                }
            }
            entries[key] = Entry(error: error, until: now + timeToLive)
        }
    }

    public func forget(_ key: String) { _ = entries.withLock { $0.removeValue(forKey: key) } }
    public func removeAll() { entries.withLock { $0.removeAll() } }
    public var count: Int { entries.withLock { $0.count } }
}
