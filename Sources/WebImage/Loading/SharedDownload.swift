import Foundation

/// One shared download in the ``DownloadRegistry``: its callers, its effective priority and the
/// handle of the task that runs it.
///
/// `@unchecked Sendable` because its mutable state is guarded from outside: every read and write
/// happens under the registry's lock while the download is in the registry's table; once the one
/// thread that removes it from the table has done so, no other thread can reach it.
final class SharedDownload: @unchecked Sendable {
    let ticket: UInt64
    let handle = OperationHandle()
    private(set) var subscribers: [UInt64: DownloadRegistry.Subscriber] = [:]
    /// The highest subscriber priority, kept current: a join only compares (O(1)); a leave or a
    /// lowered priority recomputes.
    private(set) var priority = RequestPriority.veryLow
    /// Subscribers that want progress reports.
    private(set) var observers = 0

    /// The timeout of each attempt (the creating caller's, else the downloader's).
    let attemptTimeout: Duration
    /// When the download got its first slot; `nil` while it waits in the queue.
    var startedAt: ContinuousClock.Instant?

    init(ticket: UInt64, attemptTimeout: Duration) {
        self.ticket = ticket
        self.attemptTimeout = attemptTimeout
    }

    func setDeadline(_ deadline: UInt64, of id: UInt64) { subscribers[id]?.deadline = deadline }

    func add(_ id: UInt64, _ subscriber: DownloadRegistry.Subscriber) {
        subscribers[id] = subscriber
        priority = max(priority, subscriber.priority)
        if subscriber.progress != nil { observers += 1 }
    }

    func remove(_ id: UInt64) -> DownloadRegistry.Subscriber? {
        guard let removed = subscribers.removeValue(forKey: id) else { return nil }
        if removed.progress != nil { observers -= 1 }
        if removed.priority == priority { recompute() }
        return removed
    }

    func setPriority(_ value: RequestPriority, of id: UInt64) {
        subscribers[id]?.priority = value
        if value >= priority { priority = value } else { recompute() }
    }

    /// The progress handlers due a report of `received` bytes (with whether each wants the
    /// partial data), marking them reported: at most one report per caller's interval, except
    /// the completing one, and never a repeated or lower count.
    ///
    /// The subscribers are updated in place, by index: assigning through `subscribers[id]`
    /// while iterating over the dictionary copied all of it, twice per report (a third of a
    /// rendered request's allocations in `serve`, heaptrack, 2026-11-27).
    func due(received: Int, complete: Bool, now: ContinuousClock.Instant) -> [(@Sendable (DownloadProgress) -> Void, Bool)] {
        guard observers > 0 else { return [] }
        var due: [(@Sendable (DownloadProgress) -> Void, Bool)] = []
        var index = subscribers.startIndex
        while index != subscribers.endIndex {
            defer { subscribers.formIndex(after: &index) }
            let subscriber = subscribers.values[index]
            guard let handler = subscriber.progress, received > subscriber.lastReceived else { continue }
            if !complete, let last = subscriber.lastReport, now - last < subscriber.interval { continue }
            due.append((handler, subscriber.wantsPartialData))
            subscribers.values[index].lastReport = now
            subscribers.values[index].lastReceived = received
        }
        return due
    }

    private func recompute() {
        priority = subscribers.values.reduce(RequestPriority.veryLow) { max($0, $1.priority) }
    }
}
