import Synchronization
import Tracing

/// One piece of work per key, shared by everyone who asks for that key while it runs: the
/// mechanism behind every stage of the pipeline's task graph (original data, decode, process).
///
/// Each subscriber has its own continuation, priority and event handler. The work runs at the
/// highest priority of its subscribers: joining lifts it, leaving or lowering lowers it, and the
/// work hears of every change through ``Context/onPriorityChange(_:)`` (a stage passes it on to
/// the stage below, the data stage to its download). Cancelling one subscriber resumes only that
/// subscriber; when the last one leaves, the work's task is cancelled, which cancels the
/// subscriptions it holds below. A finished job is forgotten: the next caller starts a new one.
///
/// A mutex, not an actor: joining and leaving are a few dictionary operations and must not cost
/// a hop. Continuations are unsafe (unchecked) ones: each is resumed exactly once — by `finish`,
/// or by `leave` after it was removed from the table under the lock, or at once when the
/// caller was already cancelled — and the checked kind costs an allocation per caller. Continuations and event handlers run after the lock is released; priority observers run
/// under it, so changes reach the stage below in the order they were made (lock order: a stage,
/// then the stages below it, then the downloader's registry and queue — never upwards).
final class SharedWork<Key: Hashable & Sendable, Value: Sendable, Event: Sendable>: Sendable {
    typealias EventHandler = @Sendable (Event) -> Void
    typealias Work = @Sendable (Context) async throws -> Value

    struct Subscriber {
        let id: UInt64
        var continuation: UnsafeContinuation<Value, any Error>
        var priority: RequestPriority
        var onEvent: EventHandler?
    }

    /// What the work sees of its job.
    struct Context: Sendable {
        fileprivate let owner: SharedWork
        let key: Key
        fileprivate let jobID: UInt64

        /// The highest priority among the subscribers now.
        var priority: RequestPriority { owner.jobs.withLock { $0[key].flatMap { $0.id == jobID ? $0.priority : nil } ?? .normal } }

        /// Sends `event` to every subscriber (in the order sent).
        func send(_ event: Event) {
            let handlers = owner.jobs.withLock { jobs -> [EventHandler] in
                guard let job = jobs[key], job.id == jobID, !job.handlers.isEmpty else { return [] }
                return Array(job.handlers.values)
            }
            for handler in handlers { handler(event) }
        }

        /// Calls `observer` with each new job priority (under the registry's lock: keep it short
        /// and call only stages below). Returns the priority in force when it was registered.
        @discardableResult
        func onPriorityChange(_ observer: @escaping @Sendable (RequestPriority) -> Void) -> RequestPriority {
            owner.jobs.withLock { jobs in
                guard let job = jobs[key], job.id == jobID else { return .normal }
                job.priorityObserver = observer
                return job.priority
            }
        }
    }

    private let jobs = Locked<[Key: Job]>([:])
    /// Where the work's tasks run (`nil`: the cooperative pool).
    private let executor: (any TaskExecutor)?

    init(executor: (any TaskExecutor)? = nil) { self.executor = executor }
    private let ids = Atomic<UInt64>(0)
    /// Jobs started (not joined): how many times the work really ran. For tests and metrics.
    private let started = Atomic<Int>(0)

    var startedCount: Int { started.load(ordering: .relaxed) }

    /// A new subscriber identity, for ``setPriority(_:key:subscriber:)``.
    func makeSubscriberID() -> UInt64 { ids.add(1, ordering: .relaxed).newValue }

    /// The value of the job for `key`, joining it, or starting the work `start` makes if none runs.
    ///
    /// `start` is called only by the caller that starts the job: the work closure (and whatever
    /// it captures) is made once per job, not once per caller — with 10,000 callers of one image,
    /// a closure context each was a measurable part of a caller's cost.
    ///
    /// `latestPriority`, if given, is read under the lock as the subscriber joins and replaces
    /// `priority`: a ``setPriority(_:key:subscriber:)`` made before the subscriber was in the
    /// table (an ``ImageTask``'s priority set right after it was made) is then not lost — it
    /// either updated what `latestPriority` reads before, or finds the subscriber after.
    func value(
        for key: Key, subscriber id: UInt64, priority: RequestPriority, latestPriority: (@Sendable () -> RequestPriority)? = nil,
        onEvent: EventHandler? = nil, start: () -> Work
    ) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Value, any Error>) in
                var subscriber = Subscriber(id: id, continuation: continuation, priority: priority, onEvent: onEvent)
                let newJob: UInt64? = jobs.withLock { jobs in
                    // Checked under the lock: either this sees the cancellation or `leave` sees us.
                    guard !Task.isCancelled else { return 0 }
                    if let latestPriority { subscriber.priority = latestPriority() }
                    if let job = jobs[key] {
                        job.add(subscriber)
                        job.updatePriority()
                        return nil
                    }
                    let jobID = ids.add(1, ordering: .relaxed).newValue
                    let job = Job(id: jobID, priority: subscriber.priority)
                    job.add(subscriber)
                    jobs[key] = job
                    return jobID
                }
                switch newJob {
                case nil: return
                case 0?: continuation.resume(throwing: CancellationError())
                case let jobID?:
                    started.add(1, ordering: .relaxed)
                    let context = Context(owner: self, key: key, jobID: jobID)
                    let work = start()
                    // Detached (no task-locals or priority of whoever came first), but the first
                    // caller's trace context is kept so the job's spans are children of its request.
                    let trace = ServiceContext.current ?? .topLevel
                    let task = Task.detached(executorPreference: executor, priority: subscriber.priority.taskPriority) {
                        let result: Result<Value, any Error>
                        do {
                            result = .success(try await ServiceContext.withValue(trace) { try await work(context) })
                        } catch {
                            result = .failure(error)
                        }
                        self.finish(key, jobID, result)
                    }
                    // Every subscriber may have left before the task existed (the job is then gone from
                    // the table, or a newer one has its key): nobody would cancel it, so do it here.
                    let cancelled = jobs.withLock { jobs -> Bool in
                        guard let job = jobs[key], job.id == jobID else { return true }
                        job.task = task
                        return job.isEmpty
                    }
                    if cancelled { task.cancel() }
                }
            }
        } onCancel: {
            leave(key, subscriber: id)
        }
    }

    /// Changes one subscriber's priority; the job follows its highest subscriber.
    func setPriority(_ priority: RequestPriority, key: Key, subscriber id: UInt64) {
        jobs.withLock { jobs in
            guard let job = jobs[key] else { return }
            job.setPriority(priority, of: id)
            job.updatePriority()
        }
    }

    /// Whether a job for `key` is running (for tests and the prefetcher).
    func isRunning(_ key: Key) -> Bool { jobs.withLock { $0[key] != nil } }

    private func leave(_ key: Key, subscriber id: UInt64) {
        let (continuation, task) = jobs.withLock { jobs -> (UnsafeContinuation<Value, any Error>?, Task<Void, Never>?) in
            guard let job = jobs[key], let gone = job.remove(id) else { return (nil, nil) }
            if job.isEmpty {
                jobs[key] = nil
                return (gone.continuation, job.task)
            }
            job.updatePriority()
            return (gone.continuation, nil)
        }
        continuation?.resume(throwing: CancellationError())
        task?.cancel()
    }

    private func finish(_ key: Key, _ jobID: UInt64, _ result: Result<Value, any Error>) {
        // The job's own list, in joining order (it goes with the job, so nothing is copied).
        let subscribers = jobs.withLock { jobs -> [Subscriber?] in
            guard let job = jobs[key], job.id == jobID else { return [] }
            jobs[key] = nil
            return job.joined
        }
        for case let subscriber? in subscribers { subscriber.continuation.resume(with: result) }
    }
}

extension RequestPriority {
    /// The Swift task priority a job at this priority runs at.
    var taskPriority: TaskPriority {
        switch self {
        case .veryLow, .low: .low
        case .normal: .medium
        case .high, .veryHigh: .high
        }
    }
}
