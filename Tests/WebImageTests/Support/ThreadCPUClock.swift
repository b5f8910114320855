import Foundation
import Synchronization

/// The CPU time one thread has used, readable from any other thread while that thread lives.
///
/// Cancellation tests measure what a cancelled job still *spends*, not when it ends by the wall
/// clock: on a loaded machine (the suite runs tests in parallel on two cores) a thread can wait
/// for a core for longer than the whole bound, while its CPU time after the cancel stays what the
/// code does.
struct ThreadCPUClock: Sendable {
    private let id: clockid_t

    /// The clock of the calling thread.
    static func current() -> ThreadCPUClock {
        var id = clockid_t()
        precondition(pthread_getcpuclockid(pthread_self(), &id) == 0, "no CPU clock for this thread")
        return ThreadCPUClock(id: id)
    }

    private init(id: clockid_t) { self.id = id }

    /// CPU time the thread has used so far.
    var used: Duration {
        var time = timespec()
        precondition(clock_gettime(id, &time) == 0, "the thread's CPU clock cannot be read")
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

/// The thread a job runs on, published by the job when it starts, so that another thread can
/// cancel it and time what it spends after that.
final class JobThread: Sendable {
    private let clock = Mutex<ThreadCPUClock?>(nil)

    /// Called by the job, first, on its own thread; the thread's clock.
    func started() -> ThreadCPUClock {
        let current = ThreadCPUClock.current()
        clock.withLock { $0 = current }
        return current
    }

    /// Blocks the calling thread until the job has started; its thread's clock.
    func waitUntilStarted() -> ThreadCPUClock {
        while true {
            if let started = clock.withLock({ $0 }) { return started }
            usleep(200)
        }
    }

    /// Cancels `task` from a thread of its own once the job has used `cpu` of CPU time (the
    /// tests' cooperative threads can be late by more than a whole job when the suite runs);
    /// the CPU time the job had used when the cancel came.
    func cancel<Success: Sendable>(_ task: Task<Success, Never>, afterUsing cpu: Duration) async -> Duration {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let clock = self.waitUntilStarted()
                // A job that ends before it has used `cpu` (it failed at once) is cancelled after
                // a minute anyway, so that its test fails instead of waiting for ever.
                let giveUp = ContinuousClock.now + .seconds(60)
                while clock.used < cpu, ContinuousClock.now < giveUp { usleep(200) }
                // Read after the cancel, not before: a canceller descheduled between the two (a
                // loaded machine) had counted the job's CPU in that gap as spent after the cancel
                // (a lossy WebP frame once "used 121 ms after the cancel" in a full run).
                task.cancel()
                let spent = clock.used
                continuation.resume(returning: spent)
            }
        }
    }
}
