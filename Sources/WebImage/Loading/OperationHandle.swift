/// The task that runs one shared download, reachable for cancellation from any thread.
///
/// The download runs its first attempt inline in its task, and an attempt's timeout interrupts
/// it by cancelling that task. Task cancellation cannot be undone, so a retry after a timeout
/// continues in a new task ``continueInNewTask(_:)`` registers here: cancelling the download
/// (its last caller left) reaches whichever task runs it now.
final class OperationHandle: Sendable {
    private struct State {
        var cancelCurrent: (@Sendable () -> Void)?
        var isCancelled = false
        /// Counts the tasks installed: an interruption aimed at one task never reaches the next.
        var generation = 0
    }

    private let state = Locked(State())

    /// Starts the download's task.
    func start(_ body: @escaping @Sendable () async -> Void) {
        // Detached: it is started by whichever thread admits it (often another download's task),
        // whose priority and task-locals are not this download's.
        _ = install { Task.detached { await body() } }
    }

    /// The download is cancelled: its current task is, and so is any later one.
    func cancel() {
        state.withLock { state in
            state.isCancelled = true
            return state.cancelCurrent
        }?()
    }

    /// Whether the download (not just an attempt) was cancelled.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// The running task's number, to aim a later ``interrupt(generation:)`` at it.
    var generation: Int { state.withLock { $0.generation } }

    /// Interrupts task number `generation`, if it still runs the download, without cancelling
    /// the download (an attempt timed out).
    func interrupt(generation: Int) {
        state.withLock { $0.generation == generation ? $0.cancelCurrent : nil }?()
    }

    /// Runs `body` in a new task that ``cancel()`` reaches, and waits for it. Called from a task
    /// that ``interrupt(generation:)`` cancelled, which can await no other work.
    func continueInNewTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await install { Task.detached { try await body() } }.value
    }

    /// Makes the task under the lock, so that the task's first look at ``generation`` already
    /// sees its own number.
    private func install<T, F>(_ make: () -> Task<T, F>) -> Task<T, F> {
        let (task, cancelled) = state.withLock { state in
            let task = make()
            state.cancelCurrent = { task.cancel() }
            state.generation += 1
            return (task, state.isCancelled)
        }
        if cancelled { task.cancel() }
        return task
    }
}
