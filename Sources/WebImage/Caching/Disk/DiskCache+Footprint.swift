import Foundation
internal import Logging

// The folder's footprint (see ``DiskFootprint``): writes in progress are covered by a
// reservation in the index that every process counts, room is made before a temporary file is
// written, and the WAL is truncated after every eviction.
extension DiskCache {
    /// Counts `bytes` as in flight. When this cache's reservation in the index does not cover all
    /// its writes in progress (or is due for renewal), reserves first, in one transaction that
    /// evicts what the limit then requires; while the other caches' reservations leave no room,
    /// waits and asks again, up to ``Configuration/busyTimeout``.
    /// - Throws: ``DiskCacheError/writeFailed(path:reason:)`` when no room came, or the index's error;
    ///   `bytes` are not in flight then.
    func reserveRoom(for bytes: Int) throws(DiskCacheError) {
        let grace = configuration.orphanGracePeriod.seconds
        let covered = pending.withLock { state in
            state.inFlight += bytes
            return state.inFlight <= state.reserved && abs(Date().timeIntervalSince1970 - state.renewed) < grace / 2
        }
        guard !covered else { return }
        let giveUp = ContinuousClock.now + configuration.busyTimeout
        var pause = 1
        do {
            while true {
                let now = Date().timeIntervalSince1970
                // Both closures run under the index's write lock: no other process decides
                // anything from this row before it is committed.
                let change = try index.reserve(
                    policy: ReservationPolicy(owner: owner, now: now, grace: grace), limits: limits(), usage: takeUsage(),
                    wanted: { pending.withLock { max(footprint.writeGrant, $0.inFlight) } },
                    granted: { size in pending.withLock { $0.reserved = size; $0.renewed = now } })
                applied(change)
                if !change.refused { return }
                guard ContinuousClock.now < giveUp else { break }
                Thread.sleep(forTimeInterval: Double(pause) / 1000)
                pause = min(pause * 2, 50)
            }
        } catch {
            pending.withLock { $0.inFlight -= bytes; $0.reserved = 0 }  // the row may not have been written
            throw error
        }
        pending.withLock { $0.inFlight -= bytes }
        throw .writeFailed(
            path: files.incoming.path,
            reason: "no room within the size limit of \(configuration.sizeLimit) bytes: other writes in progress hold it")
    }

    /// What a store's transaction does to this cache's reservation: the stored entry now counts
    /// as an entry, so the reservation shrinks to what the other writes in progress need (at
    /// least ``DiskFootprint/writeGrant``). Shrunk here before the commit: a smaller number only
    /// makes this cache reserve again sooner.
    func reservationUpdate(storing bytes: Int) -> ReservationUpdate {
        ReservationUpdate(
            owner: owner,
            target: { [self] in
                pending.withLock { state -> Int? in
                    let target = max(footprint.writeGrant, state.inFlight - bytes)
                    guard target < state.reserved else { return nil }
                    state.reserved = target
                    return target
                }
            },
            resized: { [self] _, present in
                if !present { pending.withLock { $0.reserved = 0 } }  // taken as dead by another cache: reserve again
            })
    }

    /// After a write transaction: its unreferenced files are deleted, after evictions the WAL is
    /// truncated (its pages of the evicted rows would otherwise stay on disk), and reservations of
    /// ended processes are removed once the orphan sweep has taken the files they may have left.
    func applied(_ change: IndexChange) {
        change.unreferenced.forEach(files.remove)
        if change.evicted > 0 {
            metrics.evictions.increment(by: change.evicted)
            (try? index)?.truncateWAL()
        }
        guard !change.reclaimable.isEmpty else { return }
        let cutoff = Date().timeIntervalSince1970 - configuration.orphanGracePeriod.seconds - 1
        sweepOrphans()
        do { try index.drop(change.reclaimable, deadBefore: cutoff) } catch {
            logger.warning("disk cache could not remove reservations of ended processes", metadata: ["error": "\(error)"])
        }
        logger.info("disk cache reclaimed reservations of ended processes", metadata: ["count": "\(change.reclaimable.count)"])
    }

    /// Removes this cache's reservation (at `deinit`: it has no writes in progress any more).
    func releaseReservation() {
        guard pending.withLock({ state in defer { state.reserved = 0 }; return state.renewed > 0 }) else { return }
        do { try index.release(owner: owner) } catch {
            logger.warning("disk cache could not remove its reservation", metadata: ["error": "\(error)"])
        }
    }
}
