/// Calls actions when their deadlines pass, from one task that sleeps until the earliest.
///
/// Attempts arm a deadline when they start and disarm it when they end; both are a lock and a
/// dictionary operation on the calling thread. (An event-loop timer per attempt cost two
/// cross-thread wake-ups per download, visible in the batch benchmark's profile.) The driver
/// task wakes at the earliest deadline it saw, fires what is due and sleeps until the next; it
/// ends on a pass that finds nothing armed. A deadline earlier than its wake-up replaces it.
final class DeadlineMonitor: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let fire: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        /// When the current driver wakes next; `nil` when no driver runs.
        var wake: ContinuousClock.Instant?
        var driver: Task<Void, Never>?
        var generation = 0
    }

    private let state = Locked(State())

    /// Calls `fire` once `deadline` passes, unless ``disarm(_:)`` comes first.
    func arm(at deadline: ContinuousClock.Instant, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, replaced) = state.withLock { state -> (UInt64, Task<Void, Never>?) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, fire: fire)
            if let wake = state.wake, wake <= deadline { return (state.nextID, nil) }
            let replaced = state.driver
            state.generation += 1
            state.wake = deadline
            let generation = state.generation
            state.driver = Task.detached { await self.drive(generation) }
            return (state.nextID, replaced)
        }
        replaced?.cancel()
        return id
    }

    func disarm(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    private func drive(_ generation: Int) async {
        while true {
            let now = ContinuousClock.now
            let (due, wake) = state.withLock { state -> ([@Sendable () -> Void], ContinuousClock.Instant?) in
                guard state.generation == generation else { return ([], nil) }  // replaced
                var due: [@Sendable () -> Void] = []
                var earliest: ContinuousClock.Instant?
                for (id, entry) in state.entries {
                    if entry.deadline <= now {
                        due.append(entry.fire)
                        state.entries[id] = nil
                    } else if earliest.map({ entry.deadline < $0 }) ?? true {
                        earliest = entry.deadline
                    }
                }
                state.wake = earliest
                if earliest == nil { state.driver = nil }
                return (due, earliest)
            }
            for fire in due { fire() }
            guard let wake else { return }
            // Cancelled only when a new driver replaces this one: the next pass sees that.
            try? await Task.sleep(until: wake, clock: .continuous)
        }
    }
}
