import Testing
import WebImage

/// Test bodies run on threads of their own, not on Swift's cooperative pool.
///
/// The pool has one thread per core: two here. Swift Testing runs every test (synchronous ones
/// too) as a task on it, so two tests that decode, encode or wait synchronously for seconds held
/// both threads, and everything else in the process that needs the pool — the in-process
/// origins' handlers, the HTTP clients' streams, timeouts, every other test — stopped for that
/// long. A profile of a full run (`perf record` on the test process) showed 40 s of one
/// parameterised synchronous test on the pool, and the timing-sensitive tests that failed in CI
/// were those waiting for an origin meanwhile.
///
/// With this trait on every suite (inherited by nested suites and by each test's child tasks),
/// a test's own code runs on ``executor``'s threads, which are plenty; the pool is left to the
/// code under test. Code isolated to an actor (`@MainActor` suites) still runs on its actor.
struct TestThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    /// Threads for test bodies: more than tests that block at once in practice, so a blocked
    /// test never waits for another to give a thread back.
    static let executor = ImageWorkExecutor(threads: 16, name: "test-body")

    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(Self.executor) { try await function() }
    }
}

extension Trait where Self == TestThreadsTrait {
    /// Runs the suite's tests on threads of their own (``TestThreadsTrait``).
    static var onTestThreads: Self { Self() }
}
