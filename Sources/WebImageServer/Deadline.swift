import WebImage
/// Waits for `work` (already running in its own task) or for `timeout`, whichever comes first.
/// On timeout the caller is answered at once and `work` is cancelled: decoding, processing and
/// encoding look at `Task.isCancelled` between frames, steps and rows, so the render stops
/// within a few rows and whoever started it gets its slot back when it ends. Cancelling the
/// waiting task cancels `work` too, and so does the client leaving (`closing`): Hummingbird does
/// not cancel a handler whose connection closed, so the connection's watch says so. A value that arrives after the
/// deadline is a timeout as well: on a busy machine the timer's task can run after a render
/// that overran it (a 1 ns deadline once let a one-second render through).
enum Deadline {
    static func value<T: Sendable>(of work: Task<T, Never>, timeout: Duration, closing watch: ConnectionWatch? = nil) async -> T? {
        let once = Once<T?>()
        let deadline = ContinuousClock.now + timeout
        let listener = watch?.onClose {
            work.cancel()
            once.resume(returning: nil)
        }
        defer { watch?.stopListening(listener) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                once.set(continuation)
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }  // the value came first
                    work.cancel()
                    once.resume(returning: nil)
                }
                Task {
                    let value = await work.value
                    once.resume(returning: ContinuousClock.now < deadline ? value : nil)
                    // The timer holds `work`, and with it the value (a rendered image, a source
                    // and its memory reservation): it ends now, not at the deadline.
                    timer.cancel()
                }
            }
        } onCancel: {
            work.cancel()
            once.resume(returning: nil)
        }
    }

    /// A continuation resumed by whichever side comes first. A side that comes before the
    /// continuation is set (the client had left, the task was cancelled) leaves its value for it.
    private final class Once<Value: Sendable>: Sendable {
        private enum State {
            case waiting
            case set(CheckedContinuation<Value, Never>)
            case early(Value)
            case done
        }
        private let state = Locked<State>(.waiting)

        func set(_ continuation: CheckedContinuation<Value, Never>) {
            let early: Value? = state.withLock { state in
                if case .early(let value) = state {
                    state = .done
                    return value
                }
                state = .set(continuation)
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }

        func resume(returning value: Value) {
            let continuation: CheckedContinuation<Value, Never>? = state.withLock { state in
                switch state {
                case .waiting:
                    state = .early(value)
                    return nil
                case .set(let continuation):
                    state = .done
                    return continuation
                case .early, .done:
                    return nil
                }
            }
            continuation?.resume(returning: value)
        }
    }
}
