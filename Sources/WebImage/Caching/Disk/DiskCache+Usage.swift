import Foundation
internal import Logging
internal import Metrics

// Batched usage: access times and hit counts are gathered under the mutex and written in one
// transaction (every 256 hits or second, before evictions, on statistics, flush and deinit).
extension DiskCache {
    /// Writes batched access times and hit counts now.
    public func flush() {
        let usage = takeUsage()
        guard !usage.isEmpty else { return }
        do { try index.flush(usage) } catch {
            logger.warning("disk cache could not record access times", metadata: ["error": "\(error)"])
        }
    }

    func miss() -> DataCacheEntry? {
        metrics.misses.increment()
        pending.withLock { $0.usage.misses += 1 }
        return nil
    }

    func recordHit(_ key: String, at now: Date) {
        metrics.hits.increment()
        let due = pending.withLock { state in
            state.usage.hits += 1
            state.usage.touches[key] = now.timeIntervalSince1970
            let start = state.since ?? .now
            state.since = start
            return state.usage.touches.count >= 256 || start.duration(to: .now) > .seconds(1)
        }
        if due { flush() }
    }

    func takeUsage() -> PendingUsage {
        pending.withLock { state in
            defer { state.usage = PendingUsage(); state.since = nil }
            return state.usage
        }
    }
}

/// The swift-metrics counters of a disk cache.
struct DiskCacheMetrics: Sendable {
    let hits = Counter(label: "webimage_disk_cache_hits_total")
    let misses = Counter(label: "webimage_disk_cache_misses_total")
    let evictions = Counter(label: "webimage_disk_cache_evictions_total")
    let damaged = Counter(label: "webimage_disk_cache_damaged_total")
    let storeFailures = Counter(label: "webimage_disk_cache_store_failures_total")
}
