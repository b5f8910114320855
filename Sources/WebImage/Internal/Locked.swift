// The lock every type in the package keeps its shared state under.
//
// Normally it is the standard library's `Synchronization.Mutex` itself (a type alias: no cost).
// Thread Sanitizer on Linux does not see that mutex's futex as synchronization and reports every
// access to the state it guards as a race (`scripts/tsan-probe/mutex.swift`), which made the
// sanitizer useless for this code. `scripts/tsan` therefore builds with `WEBIMAGE_TSAN`, and
// `Locked` is then a `pthread_mutex_t`, which the sanitizer understands; same API, so the same
// code is checked.
#if WEBIMAGE_TSAN
import Glibc

/// A value only reachable while holding a pthread mutex (Thread Sanitizer builds).
///
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`, between
/// `pthread_mutex_lock` and `pthread_mutex_unlock` of `mutex`, which lives as long as the object.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    package init(_ value: sending Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
#else
package import Synchronization

/// A value only reachable while holding a mutex: `Synchronization.Mutex`.
///
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// ```
package typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
