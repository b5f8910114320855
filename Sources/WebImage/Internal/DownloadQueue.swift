import Synchronization

/// Admits at most `maxConcurrent` holders at once; the others wait by priority, then in FIFO or
/// LIFO order within a priority. A waiter's priority can change while it waits (a shared
/// download takes its highest caller's priority); cancelling a waiting task removes it.
///
/// A mutex rather than an actor: priority changes and releases take effect synchronously, so a
/// caller that raises a priority knows it is in force before the next slot is handed out.
final class DownloadQueue: Sendable {
    enum Order: Sendable { case fifo, lifo }

    private struct Waiter {
        let ticket: UInt64
        var priority: RequestPriority
        let sequence: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var maxConcurrent: Int
        var running = 0
        var isSuspended = false
        var waiters: [Waiter] = []
        var sequence: UInt64 = 0
        var cancelledBeforeWaiting: Set<UInt64> = []
    }

    let order: Order
    private let state: Mutex<State>

    init(maxConcurrent: Int, order: Order) {
        self.order = order
        state = Mutex(State(maxConcurrent: max(1, maxConcurrent)))
    }

    var maxConcurrent: Int { state.withLock { $0.maxConcurrent } }
    /// Holders now.
    var running: Int { state.withLock { $0.running } }
    /// Waiters now.
    var waitingCount: Int { state.withLock { $0.waiters.count } }
    var isSuspended: Bool { state.withLock { $0.isSuspended } }

    func setMaxConcurrent(_ value: Int) {
        resumeAll(state.withLock { $0.maxConcurrent = max(1, value); return admit(&$0) })
    }

    /// While suspended no waiter is admitted; running holders continue.
    func suspend() { state.withLock { $0.isSuspended = true } }

    func resume() {
        resumeAll(state.withLock { $0.isSuspended = false; return admit(&$0) })
    }

    /// Waits for a slot. `ticket` names the waiter for ``reprioritize(_:to:)``.
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    func acquire(ticket: UInt64, priority: RequestPriority) async throws {
        let position = state.withLock { $0.sequence += 1; return $0.sequence }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (cancelled, admitted) = state.withLock { state -> (Bool, [Waiter]) in
                    if state.cancelledBeforeWaiting.remove(position) != nil { return (true, []) }
                    state.waiters.append(Waiter(ticket: ticket, priority: priority, sequence: position, continuation: continuation))
                    return (false, admit(&state))
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                resumeAll(admitted)
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.sequence == position }) else {
                    if position > 0 { state.cancelledBeforeWaiting.insert(position) }
                    return nil
                }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        // Admitted after cancellation raced in: the mark is stale.
        state.withLock { _ = $0.cancelledBeforeWaiting.remove(position) }
    }

    /// Returns a slot and admits the next waiter.
    func release() {
        resumeAll(state.withLock { $0.running -= 1; return admit(&$0) })
    }

    /// Changes the priority of a waiting ticket (no effect once it runs).
    func reprioritize(_ ticket: UInt64, to priority: RequestPriority) {
        state.withLock { state in
            for index in state.waiters.indices where state.waiters[index].ticket == ticket {
                state.waiters[index].priority = priority
            }
        }
    }

    private func resumeAll(_ waiters: [Waiter]) {
        for waiter in waiters { waiter.continuation.resume() }
    }

    private func admit(_ state: inout State) -> [Waiter] {
        var admitted: [Waiter] = []
        while !state.isSuspended, state.running < state.maxConcurrent, let index = nextIndex(state.waiters) {
            admitted.append(state.waiters.remove(at: index))
            state.running += 1
        }
        return admitted
    }

    /// Highest priority first; among equals the oldest (FIFO) or the newest (LIFO).
    private func nextIndex(_ waiters: [Waiter]) -> Int? {
        guard !waiters.isEmpty else { return nil }
        var best = 0
        for index in waiters.indices.dropFirst() {
            let a = waiters[index], b = waiters[best]
            if a.priority != b.priority {
                if a.priority > b.priority { best = index }
            } else if order == .fifo ? a.sequence < b.sequence : a.sequence > b.sequence {
                best = index
            }
        }
        return best
    }
}
