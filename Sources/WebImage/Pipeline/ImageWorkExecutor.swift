import DequeModule
import Foundation

/// Threads of their own for CPU-bound image work — decoding, processing, encoding — so that it
/// never occupies Swift's cooperative pool.
///
/// The cooperative pool has as many threads as cores. Image work runs for whole seconds without
/// an `await`, so as many heavy renders as cores would hold every pool thread: timers, health
/// checks, cache hits and every other task of the process would wait for them. Work given to
/// this executor (`Task(executorPreference:)`, or ``ImagePipeline/Configuration/workExecutor``
/// for the pipeline's decode and process stages) runs on its threads instead, at most
/// ``threadCount`` jobs at once, first come first served; the pool stays free. The operating
/// system shares the cores between both, so nothing is starved.
///
/// ```swift
/// let renders = ImageWorkExecutor(threads: 2)
/// let thumbnail = try await Task(executorPreference: renders) {
///     try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 256))
/// }.value
/// ```
public final class ImageWorkExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked`: `jobs`, `stopped` and `threads` are read and written only while `condition` is locked;
    // everything else is set in `init` and never changes.
    private let condition = NSCondition()
    private var jobs = Deque<UnownedJob>()
    private var stopped = false
    private var threads: Set<pthread_t> = []
    /// The threads that run jobs.
    public let threadCount: Int

    /// Starts `threads` threads (at least one), named `name-0`, `name-1`, …; they run until
    /// ``shutdown()``.
    ///
    /// `niceness` (0…19) is added to the process's nice value for these threads alone: a server
    /// gives its renders 5, so that when they fill every core the event loops, health checks and
    /// cache hits still get a core at once; renders then use what is left, which on an idle
    /// machine is everything. Raising a thread's nice value needs no privilege.
    ///
    /// ```swift
    /// let renders = ImageWorkExecutor(threads: 4, name: "renders", niceness: 5)
    /// ```
    public init(threads: Int, name: String = "webimage-work", niceness: Int32 = 0) {
        threadCount = max(1, threads)
        let niceness = min(max(niceness, 0), 19)
        for index in 0..<threadCount {
            // Named from inside, by the thread itself: on Linux a name set before `start()` is
            // lost, and Foundation's `Thread.name` setter applies only once the creator has
            // recorded the new thread's id, which it may not have yet (a render thread was once
            // seen under its creator's name).
            let thread = Thread { [self] in
                Self.nameCurrentThread("\(name)-\(index)")
                if niceness > 0 { Self.lowerPriorityOfCurrentThread(by: niceness) }
                condition.withLock { _ = self.threads.insert(pthread_self()) }
                self.run()
            }
            thread.start()
        }
    }

    /// Whether the caller runs on one of this executor's threads.
    public var ownsCurrentThread: Bool {
        let current = pthread_self()
        return condition.withLock { threads.contains(current) }
    }

    /// Jobs waiting for a thread now.
    public var queuedJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the threads end once the jobs already queued have run. Jobs enqueued afterwards
    /// never run: call it only when nothing uses the executor any more.
    public func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Names the calling thread (what `top -H`, `perf` and `/proc` show) through
    /// `/proc/thread-self/comm`, Linux's per-thread name; Glibc's `pthread_setname_np` is not
    /// visible to Swift. At most 15 bytes are kept.
    private static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        defer { close(file) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        #else
        Thread.current.name = name
        #endif
    }

    /// On Linux a thread has its own nice value, set through its thread id (read from
    /// `/proc/thread-self`, a link to `PID/task/TID`: Glibc's `gettid` is not visible to Swift).
    private static func lowerPriorityOfCurrentThread(by niceness: Int32) {
        #if os(Linux)
        var link = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &link, link.count - 1)
        guard length > 0, let text = String(validating: link[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self),
              let id = text.split(separator: "/").last.flatMap({ id_t($0) }) else { return }
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        guard errno == 0 else { return }
        _ = setpriority(which, id, min(current + niceness, 19))
        #endif
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            guard let job = jobs.popFirst() else {
                condition.unlock()
                return
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
