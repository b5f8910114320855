import Foundation
import Testing
import WebImage

/// Suites whose test bodies decode, encode or compare pixels synchronously for seconds run on a
/// lane of two threads of their own, not on Swift's cooperative pool.
///
/// The pool has one thread per core: two here. Swift Testing runs every test (synchronous ones
/// too) as a task on it, so two such tests held both threads, and everything else in the process
/// that needs the pool — the in-process origins' handlers, the HTTP clients' streams, the
/// pipelines' jobs, the timers of the timing-sensitive tests — stopped for that long. A profile
/// of a full run (`scripts/measure/test-pool-profile`) showed a parameterised synchronous WebP
/// test holding the pool for 40 s, and the tests that failed in CI were those waiting for an
/// origin meanwhile.
///
/// The lane has two threads, as the pool has: CPU-bound bodies still run at most two at once
/// (more would only share the same two cores more thinly), but beside the pool instead of on it.
/// Suites that measure the pool itself, or that mostly wait, stay on it. Code isolated to an
/// actor still runs on its actor; the trait is inherited by nested suites and child tasks.
struct CPUBoundTrait: SuiteTrait, TestTrait, TestScoping {
    static let lane = ImageWorkExecutor(threads: 2, name: "test-cpu-bound")

    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(Self.lane) { try await function() }
    }
}

extension Trait where Self == CPUBoundTrait {
    /// The suite's bodies are CPU-bound: they run on ``CPUBoundTrait/lane``, not on the pool.
    static var cpuBound: Self { Self() }
}
