/// Runs one piece of work per key however many callers ask for it at once.
///
/// Each caller waits on its own continuation, so cancelling one caller ends only that caller
/// (with `CancellationError`) while the others keep waiting. When the last caller leaves, the
/// work itself is cancelled. A finished job is forgotten: the next caller starts a new one.
actor TaskCoalescer<Key: Hashable & Sendable, Value: Sendable> {
    private struct Job {
        let id: UInt64
        var task: Task<Void, Never>?
        var subscribers: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    }

    private var jobs: [Key: Job] = [:]
    private var nextID: UInt64 = 0

    /// Returns the value of the job for `key`, starting `work` if no job is running.
    func value(
        for key: Key, work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        nextID += 1
        let subscriber = nextID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                if jobs[key] != nil {
                    jobs[key]?.subscribers[subscriber] = continuation
                    return
                }
                nextID += 1
                let jobID = nextID
                jobs[key] = Job(id: jobID, subscribers: [subscriber: continuation])
                jobs[key]?.task = Task {
                    let result: Result<Value, any Error>
                    do { result = .success(try await work()) } catch { result = .failure(error) }
                    self.finish(key, jobID, result)
                }
            }
        } onCancel: {
            Task { await self.unsubscribe(key, subscriber) }
        }
    }

    private func finish(_ key: Key, _ jobID: UInt64, _ result: Result<Value, any Error>) {
        guard let job = jobs[key], job.id == jobID else { return }
        jobs[key] = nil
        for continuation in job.subscribers.values { continuation.resume(with: result) }
    }

    private func unsubscribe(_ key: Key, _ subscriber: UInt64) {
        guard let continuation = jobs[key]?.subscribers.removeValue(forKey: subscriber) else { return }
        continuation.resume(throwing: CancellationError())
        if jobs[key]?.subscribers.isEmpty == true {
            jobs[key]?.task?.cancel()
            jobs[key] = nil
        }
    }
}
