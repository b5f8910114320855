/// Admits at most `maxConcurrent` holders at once; others wait in priority order, then
/// FIFO or LIFO within a priority. Cancelling a waiter removes it from the queue.
actor DownloadQueue {
    enum Order: Sendable { case fifo, lifo }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    var maxConcurrent: Int { didSet { admit() } }
    let order: Order
    private(set) var running = 0
    private var waiting: [RequestPriority: [Waiter]] = [:]
    private var nextID: UInt64 = 0

    init(maxConcurrent: Int, order: Order) {
        self.maxConcurrent = max(1, maxConcurrent)
        self.order = order
    }

    func setMaxConcurrent(_ value: Int) { maxConcurrent = max(1, value) }

    /// Waits for a slot. Throws `CancellationError` if the task is cancelled while waiting.
    func acquire(priority: RequestPriority) async throws {
        if running < maxConcurrent && waiting.values.allSatisfy(\.isEmpty) {
            running += 1
            return
        }
        nextID += 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                waiting[priority, default: []].append(Waiter(id: id, continuation: continuation))
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Returns a slot and admits the next waiter.
    func release() {
        running -= 1
        admit()
    }

    private func admit() {
        while running < maxConcurrent, let waiter = popNext() {
            running += 1
            waiter.continuation.resume()
        }
    }

    private func popNext() -> Waiter? {
        for level in RequestPriority.allCases.reversed() {
            guard var list = waiting[level], !list.isEmpty else { continue }
            let waiter = order == .fifo ? list.removeFirst() : list.removeLast()
            waiting[level] = list
            return waiter
        }
        return nil
    }

    private func cancelWaiter(_ id: UInt64) {
        for (level, list) in waiting {
            if let index = list.firstIndex(where: { $0.id == id }) {
                waiting[level]?.remove(at: index).continuation.resume(throwing: CancellationError())
                return
            }
        }
    }
}
