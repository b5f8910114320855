// Shows that ThreadSanitizer on Linux (Swift 6.3.1) reports "Swift access race" for state guarded by
// Synchronization.Mutex, which it does not model (futex, not pthread): the counts printed are
// exact, yet TSan warns. Run: swiftc -sanitize=thread -O scripts/tsan-probe/mutex.swift -o /tmp/probe && /tmp/probe
import Synchronization
import Dispatch
final class Box: @unchecked Sendable { var count = 0 }  // guarded by `lock`
let lock = Mutex(0)
let box = Box()
DispatchQueue.concurrentPerform(iterations: 4) { _ in
    for _ in 0..<10000 { lock.withLock { _ in box.count += 1 } }
}
let state = Mutex<[Int: Int]>([:])
DispatchQueue.concurrentPerform(iterations: 4) { i in
    for j in 0..<1000 { state.withLock { $0[j] = i } }
}
print(box.count, state.withLock { $0.count })
