import Foundation
import Synchronization
import Testing
@testable import WebImage

/// The pipeline's background cache writes: bounded, run in order on a thread of their own, all
/// waited for by `flushPendingStores()` (issue 27: unbounded, they held a bulk run's bytes).
@Suite("Pending cache writes")
struct PendingStoresTests {
    @Test func aFullQueueMakesTheCallerWaitAndEveryWriteRunsInOrder() async {
        let stores = PendingStores(limit: 4)
        let done = Recorder<Int>()
        let onPool = Atomic<Int>(0)
        var mostWaiting = 0
        for n in 0..<40 {
            await stores.run {
                // Off the cooperative pool: a blocking disk write here must not hold its threads.
                if !stores.ownsCurrentThread { onPool.add(1, ordering: .relaxed) }
                usleep(2_000)
                done.append(n)
            }
            mostWaiting = max(mostWaiting, stores.count)
        }
        await stores.waitForAll()
        #expect(done.all == Array(0..<40))
        #expect(mostWaiting <= 4 + 1)  // the queue plus the one running
        #expect(mostWaiting >= 4)  // the producer outran the writes and had to wait
        #expect(onPool.load(ordering: .relaxed) == 0)
        #expect(stores.count == 0)
    }

    @Test func waitingForNoWritesReturnsAtOnce() async {
        let stores = PendingStores()
        await stores.waitForAll()
        #expect(stores.count == 0)
    }
}
