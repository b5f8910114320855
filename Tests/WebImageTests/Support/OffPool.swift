import Foundation

/// Runs blocking `work` (waiting for a process, thousands of synchronous cache writes) on a
/// thread of its own and returns its result.
///
/// The test process shares one cooperative pool of as many threads as cores — two here — among
/// hundreds of tests and the origin servers they talk to. Work that blocks one of those threads
/// for seconds stalls every other test, and timing assertions elsewhere fail; so blocking work
/// in tests goes through here.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            Thread.current.name = "test-off-pool"  // not the creating pool thread's name, for profiles
            continuation.resume(with: Result { try work() })
        }.start()
    }
}

/// ``offPool(_:)`` for work that cannot fail.
func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread {
            Thread.current.name = "test-off-pool"
            continuation.resume(returning: work())
        }.start()
    }
}
