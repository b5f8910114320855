import Foundation
internal import Logging

// The folder's footprint (see ``DiskFootprint``): room is made before a temporary file is
// written, and the WAL is truncated after every eviction.
extension DiskCache {
    /// Counts `bytes` as in flight and, when they would take the folder past the limit (as this
    /// process last saw it), evicts first. Another process's writes in progress are not known
    /// here; its own store transactions count them.
    func reserveRoom(for bytes: Int) {
        let (known, inFlight) = pending.withLock { state in
            state.inFlight += bytes
            return (state.knownUsed, state.inFlight)
        }
        guard (known ?? .max) > configuration.sizeLimit - inFlight else { return }
        var limits = limits()
        limits.reserve = inFlight
        do { applied(try index.makeRoom(limits: limits, usage: takeUsage())) } catch {
            logger.warning("disk cache could not make room before a write", metadata: ["error": "\(error)"])
        }
    }

    /// After a write transaction: its unreferenced files are deleted, and after evictions the
    /// WAL is truncated (its pages of the evicted rows would otherwise stay on disk).
    func applied(_ change: IndexChange) {
        change.unreferenced.forEach(files.remove)
        pending.withLock { $0.knownUsed = change.used }
        guard change.evicted > 0 else { return }
        metrics.evictions.increment(by: change.evicted)
        (try? index)?.truncateWAL()
    }
}
