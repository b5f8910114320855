import DequeModule
import WebImage
import Synchronization

/// Admission to rendering: at most `maxRunning` renders at once, at most `maxWaiting` requests
/// waiting for a slot (more are refused at once: `429`), and optionally at most `maxPerClient`
/// running or waiting per client.
///
/// A slot is released when the render really ends, also when the request stopped waiting for it
/// (processing timeout), so the CPU never runs more renders than slots.
final class RenderQueue: Sendable {
    let maxRunning: Int
    let maxWaiting: Int
    let maxPerClient: Int?

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var running = 0
        var waiting = Deque<Waiter>()
        var nextID = 0
        var perClient: [String: Int] = [:]
    }

    private let state = Locked(State())

    init(maxRunning: Int, maxWaiting: Int, maxPerClient: Int?) {
        self.maxRunning = max(1, maxRunning)
        self.maxWaiting = max(0, maxWaiting)
        self.maxPerClient = maxPerClient
    }

    /// Renders running now.
    var running: Int { state.withLock { $0.running } }
    /// Requests waiting for a slot now.
    var waiting: Int { state.withLock { $0.waiting.count } }
    /// Whether a new request would be admitted (to run or to wait).
    var acceptsWork: Bool { state.withLock { $0.running < maxRunning || $0.waiting.count < maxWaiting } }

    /// Waits for a slot; `nil` when the queue is full, the client is over its limit, or the
    /// caller was cancelled while waiting. Release the slot with ``Slot/release()``.
    func enter(client: String?) async -> Slot? {
        enum Decision { case run, wait(Int), refuse }
        let decision: Decision = state.withLock { state in
            if let maxPerClient, let client, state.perClient[client, default: 0] >= maxPerClient { return .refuse }
            if state.running < maxRunning {
                state.running += 1
                if let client { state.perClient[client, default: 0] += 1 }
                return .run
            }
            guard state.waiting.count < maxWaiting else { return .refuse }
            if let client { state.perClient[client, default: 0] += 1 }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch decision {
        case .refuse: return nil
        case .run: return Slot(queue: self, client: client)
        case .wait(let id):
            let admitted = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow: Bool? = state.withLock { state in
                        if Task.isCancelled { return false }
                        // A slot may have been freed between the decision and here.
                        if state.running < maxRunning { state.running += 1; return true }
                        state.waiting.append(Waiter(id: id, continuation: continuation))
                        return nil
                    }
                    if let resumeNow { continuation.resume(returning: resumeNow) }
                }
            } onCancel: {
                let waiter: Waiter? = state.withLock { state in
                    guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiting.remove(at: index)
                }
                waiter?.continuation.resume(returning: false)
            }
            guard admitted else {
                if let client { state.withLock { Self.leave(client, &$0) } }
                return nil
            }
            return Slot(queue: self, client: client)
        }
    }

    fileprivate func release(client: String?) {
        let next: Waiter? = state.withLock { state in
            if let client { Self.leave(client, &state) }
            if let waiter = state.waiting.popFirst() { return waiter }   // the slot passes on
            state.running -= 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    private static func leave(_ client: String, _ state: inout State) {
        let count = state.perClient[client, default: 1] - 1
        state.perClient[client] = count > 0 ? count : nil
    }

    /// One admitted render; release it exactly once.
    final class Slot: Sendable {
        private let queue: RenderQueue
        private let client: String?
        private let released = Atomic(false)

        fileprivate init(queue: RenderQueue, client: String?) {
            self.queue = queue
            self.client = client
        }

        func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            queue.release(client: client)
        }

        deinit { release() }
    }
}
