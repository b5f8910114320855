import Foundation

/// The shared downloads in flight, keyed by identity, and the callers waiting on each.
///
/// SDWebImage keeps one operation per URL with a list of callback tokens; AFNetworking keeps
/// "merged tasks" with response handlers. Here each caller is a subscriber with its own
/// continuation, priority and progress reporting: cancelling one resumes only that caller;
/// when the last leaves, the shared task is cancelled (which closes the connection). The
/// shared download waits in the queue at the highest priority of its subscribers.
///
/// A mutex rather than an actor: joining, leaving and finishing are a few dictionary operations,
/// and an actor would add two hops (subscribe, finish) to every download. Continuations and
/// progress handlers are always called after the lock is released; priority changes reach the
/// queue under it (lock order: registry, then queue), so they arrive in the order they were made.
/// A progress handler may still run just after its caller was cancelled.
final class DownloadRegistry: Sendable {
    struct Subscriber {
        let continuation: CheckedContinuation<DownloadResult, any Error>
        var priority: RequestPriority
        let progress: (@Sendable (DownloadProgress) -> Void)?
        let interval: Duration
        let wantsPartialData: Bool
        var lastReport: ContinuousClock.Instant?
        var lastReceived = -1
        /// A timeout shorter than the shared download's own: this caller's deadline, armed when
        /// the download starts (or when the caller joins one already running).
        let ownTimeout: Duration?
        var deadline: UInt64?
    }

    private struct State {
        var downloads: [String: SharedDownload] = [:]
        var nextTicket: UInt64 = 0
    }

    private let state = Locked(State())
    let queue: DownloadQueue
    private let deadlines: DeadlineMonitor

    init(queue: DownloadQueue, deadlines: DeadlineMonitor) {
        self.queue = queue
        self.deadlines = deadlines
    }

    /// Whether any caller of the shared download of `key` wants progress reports: checked per
    /// chunk, so an unobserved download streams its body without building any report.
    func isObserved(_ key: String) -> Bool {
        state.withLock { $0.downloads[key]?.observers ?? 0 > 0 }
    }

    /// What a new shared download queues: the priority it waits at for its first slot, and the
    /// work its task runs once admitted (holding that slot).
    struct Work: Sendable {
        var stage: QueueStage
        var run: @Sendable () async throws -> DownloadResult
    }

    /// Waits for the shared download of `key`, creating it with `make(ticket, handle)` if none
    /// runs. `make` is called at most once per shared download, by the caller that creates it;
    /// the download's task is made only when the queue admits it, so a long queue costs no tasks.
    /// `timeout` is the attempt timeout a download created by this caller runs with; a joiner
    /// whose own timeout is shorter than the running download's gets its own deadline.
    func subscribe(
        key: String, id: UInt64, request: ImageDownloadRequest, timeout: Duration,
        progress: (@Sendable (DownloadProgress) -> Void)?,
        make: @Sendable (UInt64, OperationHandle) -> Work
    ) async throws -> DownloadResult {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DownloadResult, any Error>) in
                var subscriber = Subscriber(
                    continuation: continuation, priority: request.priority, progress: progress,
                    interval: request.progressInterval, wantsPartialData: request.wantsPartialData,
                    ownTimeout: request.timeout.map { min($0, timeout) })
                // Checked under the lock: a cancellation that lands before the subscriber is in
                // the table sets the flag first, so either this sees it or `unsubscribe` sees us.
                let outcome = state.withLock { state -> JoinOutcome in
                    guard !Task.isCancelled else { return .cancelled }
                    if let shared = state.downloads[key] {
                        let before = shared.priority
                        if let own = subscriber.ownTimeout, own < shared.attemptTimeout, let started = shared.startedAt {
                            subscriber.deadline = armDeadline(key: key, id: id, at: max(started, .now) + own)
                        }
                        shared.add(id, subscriber)
                        if shared.priority != before { queue.reprioritize(shared.ticket, to: shared.priority) }
                        return .joined
                    }
                    state.nextTicket += 1
                    let shared = SharedDownload(ticket: state.nextTicket, attemptTimeout: timeout)
                    shared.add(id, subscriber)
                    state.downloads[key] = shared
                    queue.register(shared.ticket, callersPriority: shared.priority)
                    return .created(shared.ticket, shared.handle)
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: ImageDownloadError.cancelled)
                case .joined: break
                case .created(let ticket, let handle):
                    // Queued outside the lock: with a free slot the work starts on this thread.
                    let work = make(ticket, handle)
                    queue.enqueue(ticket: ticket, stage: work.stage, unless: handle) { [queue] in
                        // Its callers left while it waited for the slot (or just before queuing).
                        guard !handle.isCancelled else { return queue.release() }
                        self.started(key, ticket)
                        handle.start {
                            let result: Result<DownloadResult, any Error>
                            do { result = .success(try await work.run()) } catch { result = .failure(error) }
                            self.finish(key, ticket, result)
                        }
                    }
                }
            }
        } onCancel: {
            unsubscribe(key: key, id: id)
        }
    }

    /// The shared download of `key` holds its first slot: joiners with shorter timeouts start
    /// counting now (a caller's timeout covers the transfer, not the wait for a slot).
    private func started(_ key: String, _ ticket: UInt64) {
        state.withLock { state in
            guard let shared = state.downloads[key], shared.ticket == ticket else { return }
            let now = ContinuousClock.now
            shared.startedAt = now
            for (id, subscriber) in shared.subscribers {
                guard let own = subscriber.ownTimeout, own < shared.attemptTimeout, subscriber.deadline == nil else { continue }
                shared.setDeadline(armDeadline(key: key, id: id, at: now + own), of: id)
            }
        }
    }

    /// Arms a joiner's own deadline (under the registry's lock: lock order registry, then monitor;
    /// the monitor calls `expire` after releasing its own).
    private func armDeadline(key: String, id: UInt64, at deadline: ContinuousClock.Instant) -> UInt64 {
        deadlines.arm(at: deadline) { [weak self] in self?.leave(key: key, id: id, with: .timedOut) }
    }

    private enum JoinOutcome {
        case cancelled, joined
        case created(UInt64, OperationHandle)
    }

    /// Changes one caller's priority; the shared download follows its highest caller.
    func setPriority(_ priority: RequestPriority, key: String, id: UInt64) {
        state.withLock { state in
            guard let shared = state.downloads[key], shared.subscribers[id] != nil else { return }
            shared.setPriority(priority, of: id)
            queue.reprioritize(shared.ticket, to: shared.priority)
        }
    }

    /// Reports progress of the shared download of `key` to each of its callers, honouring
    /// each caller's minimum interval and never going backwards.
    func report(key: String, ticket: UInt64, received: Int, expected: Int?, data: @autoclosure () -> Data) {
        let now = ContinuousClock.now
        let complete = expected.map { received >= $0 } ?? false
        let due = state.withLock { state -> [(@Sendable (DownloadProgress) -> Void, Bool)] in
            guard let shared = state.downloads[key], shared.ticket == ticket else { return [] }
            return shared.due(received: received, complete: complete, now: now)
        }
        guard !due.isEmpty else { return }
        let partial = due.contains { $0.1 } ? data() : nil
        for (handler, wantsData) in due {
            handler(DownloadProgress(received: received, expected: expected, partialData: wantsData ? partial : nil))
        }
    }

    /// Cancels every shared download; each caller gets ``ImageDownloadError/cancelled``.
    func cancelAll() {
        let all = state.withLock { state in
            defer { state.downloads.removeAll() }
            return Array(state.downloads.values)
        }
        for shared in all {
            shared.handle.cancel()
            queue.withdraw(shared.ticket)
            for subscriber in shared.subscribers.values {
                if let deadline = subscriber.deadline { deadlines.disarm(deadline) }
                subscriber.continuation.resume(throwing: ImageDownloadError.cancelled)
            }
        }
    }

    func unsubscribe(key: String, id: UInt64) { leave(key: key, id: id, with: .cancelled) }

    /// Ends caller `id` of `key` with `error` (cancelled, or its own deadline passed); the last
    /// caller to leave cancels the shared download.
    private func leave(key: String, id: UInt64, with error: ImageDownloadError) {
        let left = state.withLock { state -> (Subscriber, SharedDownload, last: Bool)? in
            guard let shared = state.downloads[key], let subscriber = shared.remove(id) else { return nil }
            if shared.subscribers.isEmpty {
                state.downloads[key] = nil
                return (subscriber, shared, true)
            }
            queue.reprioritize(shared.ticket, to: shared.priority)
            return (subscriber, shared, false)
        }
        guard let (subscriber, shared, last) = left else { return }
        if let deadline = subscriber.deadline { deadlines.disarm(deadline) }
        subscriber.continuation.resume(throwing: error)
        if last {
            // Cancelled before withdrawn: work queued concurrently sees the flag or is withdrawn.
            shared.handle.cancel()
            queue.withdraw(shared.ticket)
        }
    }

    private func finish(_ key: String, _ ticket: UInt64, _ result: Result<DownloadResult, any Error>) {
        let done = state.withLock { state -> SharedDownload? in
            guard let shared = state.downloads[key], shared.ticket == ticket else { return nil }
            state.downloads[key] = nil
            // Under the lock: no priority change for this ticket can reach the queue after this.
            queue.forget(ticket)
            return shared
        }
        guard let shared = done else { return }
        // Out of the table, so no other thread touches `shared` any more.
        let subscribers = shared.subscribers.values
        if case .success(let value) = result {
            // The last report: every caller ends at the body size.
            for subscriber in subscribers where subscriber.lastReceived < value.data.count {
                subscriber.progress?(DownloadProgress(
                    received: value.data.count, expected: value.data.count,
                    partialData: subscriber.wantsPartialData ? value.data : nil))
            }
        }
        for subscriber in subscribers {
            if let deadline = subscriber.deadline { deadlines.disarm(deadline) }
            subscriber.continuation.resume(with: result)
        }
    }
}
