internal import DequeModule

/// Cache writes the pipeline did not wait for (no ``ImageLoadingOptions/waitStoreCache``):
/// tracked so that ``ImagePipeline/flushPendingStores()`` can wait for them, as a command-line
/// tool must before it exits.
///
/// They run one after another on a thread of their own (an ``ImageWorkExecutor`` of one thread,
/// started with the first write and ended with the pipeline), and at most ``limit`` wait: a
/// caller that would queue one more waits for room. Before (issue 27), each write was a detached
/// task of its own on the cooperative pool: a bulk run whose downloads outpaced its disk writes
/// kept every waiting write's bytes and task in memory (100,000 tiny URLs grew to 154 MB), and a
/// bound on those tasks alone made the run slower (0.58× instead of 0.91× of `--no-cache`, debug
/// build): the synchronous disk writes blocked both threads of the pool, and so the downloads.
/// The disk cache's writes serialize on its index's write lock anyway.
final class PendingStores: Sendable {
    typealias Store = @Sendable () async -> Void

    private struct State {
        var queue = Deque<Store>()
        var draining = false
        var roomWaiters = Deque<CheckedContinuation<Void, Never>>()
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var executor: ImageWorkExecutor?
    }

    private let state = Locked(State())
    let limit: Int

    init(limit: Int = 32) {
        self.limit = max(limit, 1)
    }

    func run(_ store: @escaping Store) async {
        while true {
            let queued = state.withLock { state -> Bool in
                guard state.queue.count < limit else { return false }
                state.queue.append(store)
                if !state.draining {
                    state.draining = true
                    let executor = state.executor ?? ImageWorkExecutor(threads: 1, name: "webimage-cache-writes")
                    state.executor = executor
                    Task.detached(executorPreference: executor, priority: .utility) { [self] in await drain() }
                }
                return true
            }
            if queued { return }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let wait = state.withLock { state -> Bool in
                    guard state.queue.count >= limit else { return false }  // room made meanwhile
                    state.roomWaiters.append(waiter)
                    return true
                }
                if !wait { waiter.resume() }
            }
        }
    }

    deinit {
        state.withLock { $0.executor }?.shutdown()
    }

    /// Whether the caller runs on the writes' thread (for tests).
    var ownsCurrentThread: Bool { state.withLock { $0.executor }?.ownsCurrentThread ?? false }

    /// How many writes wait or run now.
    var count: Int { state.withLock { $0.queue.count + ($0.draining ? 1 : 0) } }

    func waitForAll() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.draining || !state.queue.isEmpty else { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if idle { waiter.resume() }
        }
    }

    private func drain() async {
        while true {
            let (next, room, idle) = state.withLock { state -> (Store?, CheckedContinuation<Void, Never>?, [CheckedContinuation<Void, Never>]) in
                guard let next = state.queue.popFirst() else {
                    state.draining = false
                    defer { state.idleWaiters = [] }
                    return (nil, nil, state.idleWaiters)
                }
                return (next, state.roomWaiters.popFirst(), [])
            }
            room?.resume()
            guard let next else {
                idle.forEach { $0.resume() }
                return
            }
            await next()
        }
    }
}
