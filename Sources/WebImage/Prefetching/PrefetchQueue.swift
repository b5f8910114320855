/// The prefetcher's bookkeeping: which requests wait, which load, and the counts of the current
/// batch. A plain value with no locking of its own — ``ImagePrefetcher`` keeps it in a `Locked` (a mutex)
/// and does every change under that lock, so each method sees a consistent state.
///
/// A *batch* begins when a request is accepted while the queue is idle and ends (one all-done)
/// when nothing waits or loads any more; the counts belong to the batch and start again with
/// the next one. Every accepted request ends exactly once, as finished, skipped or cancelled, so
/// `finished + skipped + cancelled == total` when the batch ends.
struct PrefetchQueue {
    /// One accepted request. `id` tells a restarted key from the one that was stopped.
    struct Entry {
        let id: UInt64
        var request: ImageRequest
        var handle: PrefetchHandle?
    }

    let maxConcurrent: Int
    private(set) var counts = ImagePrefetcher.Counts()
    /// Slots in use: a stopped prefetch holds its slot until its task has really ended.
    private(set) var running = 0
    private var entries: [String: Entry] = [:]
    /// First in, first out; stopped entries stay in the array and are skipped.
    private var waiting: [(key: String, id: UInt64)] = []
    private var head = 0
    private var waitingCount = 0
    private var batchOpen = false
    private var nextID: UInt64 = 0

    init(maxConcurrent: Int) {
        self.maxConcurrent = max(1, maxConcurrent)
    }

    /// Whether `key` waits or loads now.
    func isActive(_ key: String) -> Bool { entries[key] != nil }

    /// The pipeline tasks of the loading entries (memory destination), for priority changes.
    var loadingImageTasks: [ImageTask] { entries.values.compactMap { $0.handle?.imageTask } }

    /// Accepts `request` to wait for a slot; false (and nothing changes) if `key` is active.
    mutating func enqueue(_ request: ImageRequest, key: String) -> Bool {
        guard entries[key] == nil else { return false }
        openBatch()
        nextID += 1
        entries[key] = Entry(id: nextID, request: request)
        waiting.append((key, nextID))
        waitingCount += 1
        counts.total += 1
        return true
    }

    /// Counts a request that needs no work (already in the memory cache) as finished at once.
    mutating func finishAtOnce() {
        openBatch()
        counts.total += 1
        counts.finished += 1
    }

    /// The next waiting request if a slot is free; it then holds the slot.
    mutating func admitNext() -> (key: String, entry: Entry)? {
        guard running < maxConcurrent else { return nil }
        while head < waiting.count {
            let (key, id) = waiting[head]
            head += 1
            guard let entry = entries[key], entry.id == id, entry.handle == nil else { continue }
            compactIfNeeded()
            waitingCount -= 1
            running += 1
            return (key, entry)
        }
        return nil
    }

    /// Remembers how to cancel the admitted entry.
    mutating func setHandle(_ handle: PrefetchHandle, key: String, id: UInt64) {
        if entries[key]?.id == id { entries[key]?.handle = handle }
    }

    /// A prefetch task ended and frees its slot. Returns the request if this ends its entry
    /// (nil when the entry was stopped before: it was counted then).
    mutating func complete(key: String, id: UInt64, result: Result<ImageSource, ImagePipelineError>) -> ImageRequest? {
        running -= 1
        guard let entry = entries[key], entry.id == id else { return nil }
        entries[key] = nil
        switch result {
        case .success: counts.finished += 1
        case .failure(.cancelled): counts.cancelled += 1
        case .failure: counts.skipped += 1
        }
        return entry.request
    }

    /// Ends `key`'s entry as cancelled. A waiting entry is simply dropped; a loading one returns
    /// its handle to cancel (its slot stays taken until the task ends).
    mutating func stop(_ key: String) -> Entry? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        if entry.handle == nil { waitingCount -= 1 }
        counts.cancelled += 1
        return entry
    }

    /// The keys of every active entry.
    var activeKeys: [String] { Array(entries.keys) }

    /// The batch's counts if it has just ended (nothing waits, nothing loads); then the batch is closed.
    mutating func takeAllDone() -> ImagePrefetcher.Counts? {
        guard batchOpen, waitingCount == 0, running == 0 else { return nil }
        batchOpen = false
        return counts
    }

    private mutating func openBatch() {
        guard !batchOpen else { return }
        batchOpen = true
        counts = ImagePrefetcher.Counts()
    }

    /// Drops the consumed front of `waiting` once it is most of the array (amortised O(1)).
    private mutating func compactIfNeeded() {
        guard head > 64, head * 2 > waiting.count else { return }
        waiting.removeFirst(head)
        head = 0
    }
}

/// How to stop one running prefetch: the task that waits for it and, for the memory
/// destination, the pipeline's ``ImageTask`` (cancelling the waiting task alone would not
/// reach it: it runs in its own task).
struct PrefetchHandle: Sendable {
    let task: Task<Void, Never>
    let imageTask: ImageTask?

    func cancel() {
        imageTask?.cancel()
        task.cancel()
    }
}
