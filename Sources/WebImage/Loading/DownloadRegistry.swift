/// The shared downloads in flight, keyed by identity, and the callers waiting on each.
///
/// SDWebImage keeps one operation per URL with a list of callback tokens; AFNetworking keeps
/// "merged tasks" with response handlers. Here each caller is a subscriber with its own
/// continuation, priority and progress reporting: cancelling one resumes only that caller;
/// when the last leaves, the shared task is cancelled (which closes the connection). The
/// shared download waits in the queue at the highest priority of its subscribers.
actor DownloadRegistry {
    struct Subscriber {
        let continuation: CheckedContinuation<DownloadResult, any Error>
        var priority: RequestPriority
        let progress: (@Sendable (DownloadProgress) -> Void)?
        let interval: Duration
        let wantsPartialData: Bool
        var lastReport: ContinuousClock.Instant?
        var lastReceived = -1
    }

    /// A class, so that joining, reporting and leaving mutate in place (no copy of the
    /// subscriber table per caller). Only touched on the registry actor.
    private final class Shared {
        let ticket: UInt64
        var task: Task<Void, Never>?
        var subscribers: [UInt64: Subscriber] = [:]
        /// The highest subscriber priority, kept current: a join only compares (O(1)); a leave
        /// or a lowered priority recomputes.
        private(set) var priority = RequestPriority.veryLow

        init(ticket: UInt64) { self.ticket = ticket }

        func add(_ id: UInt64, _ subscriber: Subscriber) {
            subscribers[id] = subscriber
            priority = max(priority, subscriber.priority)
        }

        func remove(_ id: UInt64) -> Subscriber? {
            let removed = subscribers.removeValue(forKey: id)
            if removed?.priority == priority { recompute() }
            return removed
        }

        func setPriority(_ value: RequestPriority, of id: UInt64) {
            subscribers[id]?.priority = value
            if value >= priority { priority = value } else { recompute() }
        }

        private func recompute() {
            priority = subscribers.values.reduce(RequestPriority.veryLow) { max($0, $1.priority) }
        }
    }

    private var downloads: [String: Shared] = [:]
    private var nextTicket: UInt64 = 0
    let queue: DownloadQueue
    /// Keys whose shared download has callers that want progress: read without a hop, so an
    /// unobserved download streams its body without visiting this actor per chunk.
    private let observed = Mutex<[String: Int]>([:])

    init(queue: DownloadQueue) {
        self.queue = queue
    }

    /// Whether any caller of `key` wants progress reports.
    nonisolated func isObserved(_ key: String) -> Bool { observed.withLock { $0[key] != nil } }

    private func observe(_ key: String, _ delta: Int) {
        observed.withLock { counts in
            let value = (counts[key] ?? 0) + delta
            counts[key] = value > 0 ? value : nil
        }
    }

    private func makeTicket() -> UInt64 {
        nextTicket += 1
        return nextTicket
    }

    /// Waits for the shared download of `key`, starting it with `start(ticket)` if none runs.
    func subscribe(
        key: String, id: UInt64, request: ImageDownloadRequest,
        progress: (@Sendable (DownloadProgress) -> Void)?,
        start: @escaping @Sendable (UInt64) async throws -> DownloadResult
    ) async throws -> DownloadResult {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DownloadResult, any Error>) in
                guard !Task.isCancelled else {
                    continuation.resume(throwing: ImageDownloadError.cancelled)
                    return
                }
                let subscriber = Subscriber(
                    continuation: continuation, priority: request.priority, progress: progress,
                    interval: request.progressInterval, wantsPartialData: request.wantsPartialData)
                if progress != nil { observe(key, 1) }
                if let shared = downloads[key] {
                    let before = shared.priority
                    shared.add(id, subscriber)
                    if shared.priority != before { reprioritize(shared) }
                    return
                }
                let ticket = makeTicket()
                let shared = Shared(ticket: ticket)
                shared.add(id, subscriber)
                shared.task = Task {
                    let result: Result<DownloadResult, any Error>
                    do { result = .success(try await start(ticket)) } catch { result = .failure(error) }
                    self.finish(key, ticket, result)
                }
                downloads[key] = shared
            }
        } onCancel: {
            Task { await self.unsubscribe(key: key, id: id) }
        }
    }


    /// Changes one caller's priority; the shared download follows its highest caller.
    func setPriority(_ priority: RequestPriority, key: String, id: UInt64) {
        guard let shared = downloads[key], shared.subscribers[id] != nil else { return }
        shared.setPriority(priority, of: id)
        reprioritize(shared)
    }

    /// Reports progress of the shared download of `key` to each of its callers, honouring
    /// each caller's minimum interval and never going backwards.
    func report(key: String, ticket: UInt64, received: Int, expected: Int?, data: @autoclosure () -> Data) {
        guard let shared = downloads[key], shared.ticket == ticket else { return }
        let now = ContinuousClock.now
        let complete = expected.map { received >= $0 } ?? false
        var partial: Data?
        for (id, var subscriber) in shared.subscribers {
            guard let handler = subscriber.progress, received > subscriber.lastReceived else { continue }
            if !complete, let last = subscriber.lastReport, now - last < subscriber.interval { continue }
            if subscriber.wantsPartialData && partial == nil { partial = data() }
            handler(DownloadProgress(received: received, expected: expected, partialData: subscriber.wantsPartialData ? partial : nil))
            subscriber.lastReport = now
            subscriber.lastReceived = received
            shared.subscribers[id] = subscriber
        }
    }

    /// Cancels every shared download; each caller gets ``ImageDownloadError/cancelled``.
    func cancelAll() {
        let all = downloads
        downloads.removeAll()
        observed.withLock { $0.removeAll() }
        for shared in all.values {
            shared.task?.cancel()
            queue.forget(shared.ticket)
            for subscriber in shared.subscribers.values { subscriber.continuation.resume(throwing: ImageDownloadError.cancelled) }
        }
    }

    func unsubscribe(key: String, id: UInt64) {
        guard let shared = downloads[key], let subscriber = shared.remove(id) else { return }
        if subscriber.progress != nil { observe(key, -1) }
        subscriber.continuation.resume(throwing: ImageDownloadError.cancelled)
        if shared.subscribers.isEmpty {
            shared.task?.cancel()
            queue.forget(shared.ticket)
            downloads[key] = nil
        } else {
            reprioritize(shared)
        }
    }

    private func finish(_ key: String, _ ticket: UInt64, _ result: Result<DownloadResult, any Error>) {
        guard let shared = downloads[key], shared.ticket == ticket else { return }
        downloads[key] = nil
        queue.forget(ticket)
        observe(key, -shared.subscribers.values.filter { $0.progress != nil }.count)
        if case .success(let value) = result {
            // The last report: every caller ends at the body size.
            for subscriber in shared.subscribers.values where subscriber.lastReceived < value.data.count {
                subscriber.progress?(DownloadProgress(
                    received: value.data.count, expected: value.data.count,
                    partialData: subscriber.wantsPartialData ? value.data : nil))
            }
        }
        for subscriber in shared.subscribers.values { subscriber.continuation.resume(with: result) }
    }

    private func reprioritize(_ shared: Shared) {
        queue.reprioritize(shared.ticket, to: shared.priority)
    }
}

import Foundation
import Synchronization
