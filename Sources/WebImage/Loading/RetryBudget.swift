/// The retries one caller allows an image in all, across several downloads of it: for a caller
/// that also retries by itself, so that the two kinds of retry together never ask a server more
/// often than the caller's limit.
///
/// The downloader draws one retry from the budget of a request (``ImageDownloadRequest/retryBudget``)
/// before each retry its ``RetryPolicy`` allows; an empty budget ends the retries, and the
/// download fails with the last attempt's error. The caller draws from the same budget before it
/// sends the image again itself (`webimage fetch` does, when a `429` with `Retry-After` sent a
/// line back to wait for its host), so a line is requested at most `1 + retries` times
/// whatever mix of failures its server answers.
///
/// A shared download draws from the budget of the request that started it.
///
/// ```swift
/// let budget = RetryBudget(retries: 2)
/// var request = ImageDownloadRequest(url: url)
/// request.retryBudget = budget
/// // … the download failed with a 429 and Retry-After: wait, then send it again only if
/// if budget.draw() { /* download `request` again */ }
/// ```
public final class RetryBudget: Sendable, Hashable, CustomStringConvertible {
    private let left: Locked<Int>

    /// A budget of `retries` retries (a negative count is none).
    public init(retries: Int) {
        left = Locked(max(0, retries))
    }

    /// The retries not drawn yet.
    public var remaining: Int { left.withLock { $0 } }

    /// Takes one retry: `true` if there was one left (the retry may be sent), `false` if not.
    public func draw() -> Bool {
        left.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }

    public var description: String { "RetryBudget(remaining: \(remaining))" }

    /// A budget is its own identity: two requests are alike only when they share one.
    public static func == (lhs: RetryBudget, rhs: RetryBudget) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
