import DequeModule

/// How the priority a download waits at relates to its callers'.
enum QueueStage: Sendable, Equatable {
    /// The callers' highest priority, but not below `floor` (an image stage after a look-up
    /// waits at least at high priority).
    case followsCallers(floor: RequestPriority)
    /// A fixed priority whatever the callers' (look-ups wait at low priority).
    case fixed(RequestPriority)
}

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
        let sequence: UInt64
        let stage: QueueStage
        let wake: Wake
    }

    /// How an admitted waiter is told: a suspended task resumes, or work that has no task yet
    /// starts (a shared download's task is made only once it has a slot).
    private enum Wake {
        case resume(CheckedContinuation<Void, any Error>)
        case start(@Sendable () -> Void)
    }

    private struct State {
        var maxConcurrent: Int
        var running = 0
        var isSuspended = false
        /// One queue per priority, each in arrival order: admission is O(1) (front for FIFO,
        /// back for LIFO); only cancellation and reprioritisation search.
        var levels = [Deque<Waiter>](repeating: [], count: RequestPriority.allCases.count)
        var waitingCount = 0
        var sequence: UInt64 = 0
        var cancelledBeforeWaiting: Set<UInt64> = []
        /// The priority of each ticket's callers (its highest), kept until the ticket is
        /// forgotten: every wait of the download, retries included, follows it.
        var callerPriority: [UInt64: RequestPriority] = [:]

        func priority(of ticket: UInt64, in stage: QueueStage) -> RequestPriority {
            switch stage {
            case .fixed(let priority): priority
            case .followsCallers(let floor): max(callerPriority[ticket] ?? floor, floor)
            }
        }

        mutating func insert(_ waiter: Waiter, at priority: RequestPriority) {
            var level = levels[priority.rawValue]
            levels[priority.rawValue] = []  // keep the deque uniquely referenced while mutating
            let index = level.lastIndex { $0.sequence < waiter.sequence }.map { $0 + 1 } ?? 0
            level.insert(waiter, at: index)
            levels[priority.rawValue] = level
            waitingCount += 1
        }

        mutating func remove(where match: (Waiter) -> Bool) -> (Waiter, RequestPriority)? {
            for priority in RequestPriority.allCases {
                if let index = levels[priority.rawValue].firstIndex(where: match) {
                    waitingCount -= 1
                    return (levels[priority.rawValue].remove(at: index), priority)
                }
            }
            return nil
        }
    }

    let order: Order
    private let state: Locked<State>

    init(maxConcurrent: Int, order: Order) {
        self.order = order
        state = Locked(State(maxConcurrent: max(1, maxConcurrent)))
    }

    var maxConcurrent: Int { state.withLock { $0.maxConcurrent } }
    /// Holders now.
    var running: Int { state.withLock { $0.running } }
    /// Waiters now.
    var waitingCount: Int { state.withLock { $0.waitingCount } }
    /// Waiters at `priority` now.
    func waitingCount(at priority: RequestPriority) -> Int { state.withLock { $0.levels[priority.rawValue].count } }

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
    func acquire(ticket: UInt64, stage: QueueStage) async throws {
        try Task.checkCancellation()
        // A free slot and nobody waiting: taken at once, without suspending.
        let position = state.withLock { state -> UInt64? in
            if !state.isSuspended, state.waitingCount == 0, state.running < state.maxConcurrent {
                state.running += 1
                return nil
            }
            state.sequence += 1
            return state.sequence
        }
        guard let position else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (cancelled, admitted) = state.withLock { state -> (Bool, [Waiter]) in
                    if state.cancelledBeforeWaiting.remove(position) != nil { return (true, []) }
                    let waiter = Waiter(ticket: ticket, sequence: position, stage: stage, wake: .resume(continuation))
                    state.insert(waiter, at: state.priority(of: ticket, in: stage))
                    return (false, admit(&state))
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                resumeAll(admitted)
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let (waiter, _) = state.remove(where: { $0.sequence == position }) else {
                    state.cancelledBeforeWaiting.insert(position)
                    return nil
                }
                return waiter
            }
            if case .resume(let continuation)? = waiter?.wake { continuation.resume(throwing: CancellationError()) }
        }
        // Admitted after cancellation raced in: the mark is stale.
        state.withLock { _ = $0.cancelledBeforeWaiting.remove(position) }
    }

    /// Queues work that has no task yet: `start` is called once it is admitted, holding a slot
    /// (it must ``release()`` it), on the thread that admits it: this one if a slot is free, else
    /// the one that frees a slot, resumes the queue or raises the limit. Nothing is queued if
    /// `handle` is already cancelled (checked under the lock: a cancellation either comes first
    /// or finds the work to ``withdraw(_:)``).
    func enqueue(ticket: UInt64, stage: QueueStage, unless handle: OperationHandle, start: @escaping @Sendable () -> Void) {
        resumeAll(state.withLock { state in
            guard !handle.isCancelled else { return [] }
            state.sequence += 1
            let waiter = Waiter(ticket: ticket, sequence: state.sequence, stage: stage, wake: .start(start))
            state.insert(waiter, at: state.priority(of: ticket, in: stage))
            return admit(&state)
        })
    }

    /// Forgets a ticket's callers' priority (its download is over).
    func forget(_ ticket: UInt64) {
        state.withLock { _ = $0.callerPriority.removeValue(forKey: ticket) }
    }

    /// Forgets a cancelled ticket: its callers' priority, and its queued work if that has not
    /// started (a search of the waiters, so only for cancellations).
    func withdraw(_ ticket: UInt64) {
        state.withLock { state in
            _ = state.callerPriority.removeValue(forKey: ticket)
            _ = state.remove { waiter in
                if case .start = waiter.wake { return waiter.ticket == ticket }
                return false
            }
        }
    }

    /// Returns a slot and admits the next waiter.
    func release() {
        resumeAll(state.withLock { $0.running -= 1; return admit(&$0) })
    }

    /// Records the priority of a new ticket's callers (it is not waiting yet: no search).
    func register(_ ticket: UInt64, callersPriority priority: RequestPriority) {
        state.withLock { $0.callerPriority[ticket] = priority }
    }

    /// Records the priority of a ticket's callers; a waiting ticket that follows its callers
    /// moves (a look-up's fixed priority stays). Every later wait of the ticket follows it too.
    func reprioritize(_ ticket: UInt64, to priority: RequestPriority) {
        state.withLock { state in
            state.callerPriority[ticket] = priority
            if let (waiter, _) = state.remove(where: { $0.ticket == ticket }) {
                state.insert(waiter, at: state.priority(of: ticket, in: waiter.stage))
            }
        }
    }

    private func resumeAll(_ waiters: [Waiter]) {
        for waiter in waiters {
            switch waiter.wake {
            case .resume(let continuation): continuation.resume()
            case .start(let start): start()
            }
        }
    }

    private func admit(_ state: inout State) -> [Waiter] {
        var admitted: [Waiter] = []
        while !state.isSuspended, state.running < state.maxConcurrent, let waiter = next(&state) {
            admitted.append(waiter)
            state.running += 1
        }
        return admitted
    }

    /// Highest priority first; among equals the oldest (FIFO) or the newest (LIFO).
    private func next(_ state: inout State) -> Waiter? {
        for priority in RequestPriority.allCases.reversed() where !state.levels[priority.rawValue].isEmpty {
            state.waitingCount -= 1
            return order == .fifo ? state.levels[priority.rawValue].removeFirst() : state.levels[priority.rawValue].removeLast()
        }
        return nil
    }
}
