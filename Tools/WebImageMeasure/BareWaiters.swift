import Foundation

/// Tasks that only wait on a continuation until `resumeAll()`: the floor every shared piece of
/// work costs per caller (`floor`, `caller-memory`). `@unchecked Sendable`: `continuations` is
/// read and written only under `lock`.
final class BareWaiters: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [CheckedContinuation<Int, Never>] = []

    /// Suspends the calling task until `resumeAll()`.
    func wait() async -> Int {
        await withCheckedContinuation { c in lock.withLock { continuations.append(c) } }
    }

    var count: Int { lock.withLock { continuations.count } }

    func resumeAll() {
        for c in lock.withLock({ continuations }) { c.resume(returning: 1) }
    }
}
