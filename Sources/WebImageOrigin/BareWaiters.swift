import Foundation

/// Tasks that only wait on a continuation until one value is handed to all of them: the floor
/// any sharing of one piece of work costs per caller, measured beside the pipeline by the
/// benchmarks and `WebImageMeasure` (`floor`, `floor-shared`, `caller-memory`).
///
/// ```swift
/// let waiters = BareWaiters<Int>(expected: 10_000)
/// let tasks = (0..<10_000).map { _ in Task { await waiters.wait() } }
/// await waiters.waitUntilAllIn()
/// waiters.resumeAll(with: 1)
/// ```
///
/// `@unchecked Sendable`: every field is read and written only under `lock`.
public final class BareWaiters<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private let expected: Int
    private var continuations: [CheckedContinuation<Value, Never>] = []
    private var allIn: CheckedContinuation<Void, Never>?

    public init(expected: Int) { self.expected = expected }

    /// Suspends the calling task until ``resumeAll(with:)``.
    public func wait() async -> Value {
        await withCheckedContinuation { c in
            let last = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                continuations.append(c)
                guard continuations.count == expected else { return nil }
                defer { allIn = nil }
                return allIn
            }
            last?.resume()
        }
    }

    /// Returns once `expected` tasks wait. It suspends rather than polls: a polling loop took a
    /// core from the very tasks it waited for (2 cores), and inflated the floor.
    public func waitUntilAllIn() async {
        await withCheckedContinuation { c in
            let done = lock.withLock {
                if continuations.count >= expected { return true }
                allIn = c
                return false
            }
            if done { c.resume() }
        }
    }

    /// Resumes every waiter with `value`: a number, or one object all of them share (as every
    /// caller of one image shares its response).
    public func resumeAll(with value: Value) {
        for c in lock.withLock({ continuations }) { c.resume(returning: value) }
    }
}

/// One reference each to the same object: what every caller of one image gets, for
/// ``BareWaiters``' shared floor.
public final class SharedResult: Sendable {
    public init() {}
}
