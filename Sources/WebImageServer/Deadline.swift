import WebImage
/// Waits for `work` (already running in its own task) or for `timeout`, whichever comes first.
/// On timeout `work` keeps running — CPU-bound rendering cannot be interrupted — and whoever
/// started it keeps its slot until it ends; the caller is answered at once.
enum Deadline {
    static func value<T: Sendable>(of work: Task<T, Never>, timeout: Duration) async -> T? {
        let once = Once<T?>()
        return await withCheckedContinuation { continuation in
            once.set(continuation)
            Task {
                let value = await work.value
                once.resume(returning: value)
            }
            Task {
                try? await Task.sleep(for: timeout)
                once.resume(returning: nil)
            }
        }
    }

    /// A continuation resumed by whichever side comes first.
    private final class Once<Value: Sendable>: Sendable {
        private let continuation = Locked<CheckedContinuation<Value, Never>?>(nil)
        func set(_ value: CheckedContinuation<Value, Never>) { continuation.withLock { $0 = value } }
        func resume(returning value: Value) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }
}
