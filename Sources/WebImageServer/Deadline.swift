import WebImage
/// Waits for `work` (already running in its own task) or for `timeout`, whichever comes first.
/// On timeout the caller is answered at once and `work` is cancelled: decoding, processing and
/// encoding look at `Task.isCancelled` between frames, steps and rows, so the render stops
/// within a few rows and whoever started it gets its slot back when it ends. Cancelling the
/// waiting task (the client went away) cancels `work` too. A value that arrives after the
/// deadline is a timeout as well: on a busy machine the timer's task can run after a render
/// that overran it (a 1 ns deadline once let a one-second render through).
enum Deadline {
    static func value<T: Sendable>(of work: Task<T, Never>, timeout: Duration) async -> T? {
        let once = Once<T?>()
        let deadline = ContinuousClock.now + timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                once.set(continuation)
                Task {
                    let value = await work.value
                    once.resume(returning: ContinuousClock.now < deadline ? value : nil)
                }
                Task {
                    try? await Task.sleep(for: timeout)
                    work.cancel()
                    once.resume(returning: nil)
                }
            }
        } onCancel: {
            work.cancel()
            once.resume(returning: nil)
        }
    }

    /// A continuation resumed by whichever side comes first.
    private final class Once<Value: Sendable>: Sendable {
        private let continuation = Locked<CheckedContinuation<Value, Never>?>(nil)
        func set(_ value: CheckedContinuation<Value, Never>) { continuation.withLock { $0 = value } }
        func resume(returning value: Value) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }
}
