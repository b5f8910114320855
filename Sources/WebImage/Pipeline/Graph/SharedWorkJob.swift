extension SharedWork {
    /// One running job. A class so that joining mutates it in place (a struct copied out of the
    /// table would copy its subscriber table on every join). Only touched under `jobs`' lock,
    /// which already makes every access exclusive: the runtime's own exclusivity checks are off
    /// for its fields (they were a measurable part of each of 10,000 joins).
    final class Job {
        let id: UInt64
        /// Subscribers in the order they joined (a left one's place is nil), so that they are
        /// resumed first come, first served, walking memory in order: in a table's hash order each
        /// of 10,000 resumptions missed the cache.
        @exclusivity(unchecked) var joined: [Subscriber?] = []
        /// Where each subscriber is in `joined`, by id: made the first time a subscriber is looked
        /// up (it leaves, or its priority changes) and kept from then on. Most jobs never need it,
        /// and until then a joining caller hashes nothing (inserting each id was a measurable
        /// part of each of 10,000 joins).
        @exclusivity(unchecked) private var places: [UInt64: Int]?
        /// Subscribers per priority level, so the highest is found in O(1) however many join.
        @exclusivity(unchecked) var levels = [Int](repeating: 0, count: RequestPriority.allCases.count)
        @exclusivity(unchecked) var priority: RequestPriority
        @exclusivity(unchecked) var task: Task<Void, Never>?
        @exclusivity(unchecked) var priorityObserver: (@Sendable (RequestPriority) -> Void)?
        /// The subscribers that want events, apart: most callers want none, and an event must not
        /// walk 10,000 subscribers to find the few that do.
        @exclusivity(unchecked) var handlers: [UInt64: EventHandler] = [:]

        init(id: UInt64, priority: RequestPriority) {
            self.id = id
            self.priority = priority
        }

        /// How many places in `joined` hold a subscriber (the levels count each one once).
        private var count: Int { levels.reduce(0, +) }

        var isEmpty: Bool { count == 0 }

        func add(_ subscriber: Subscriber) {
            let id = subscriber.id
            places?[id] = joined.count
            joined.append(subscriber)
            levels[subscriber.priority.rawValue] += 1
            if let handler = subscriber.onEvent { handlers[id] = handler }
        }

        func remove(_ id: UInt64) -> Subscriber? {
            guard let place = place(of: id), let gone = joined[place] else { return nil }
            places?[id] = nil
            joined[place] = nil
            levels[gone.priority.rawValue] -= 1
            if joined.count > 64, count * 2 < joined.count { compact() }
            if gone.onEvent != nil { handlers[id] = nil }
            return gone
        }

        func setPriority(_ priority: RequestPriority, of id: UInt64) {
            guard let place = place(of: id), let old = joined[place]?.priority else { return }
            levels[old.rawValue] -= 1
            levels[priority.rawValue] += 1
            joined[place]?.priority = priority
        }

        /// Follows the highest subscriber; tells the observer (under the lock) when it moved.
        func updatePriority() {
            guard let top = levels.lastIndex(where: { $0 > 0 }).flatMap(RequestPriority.init(rawValue:)), top != priority else { return }
            priority = top
            priorityObserver?(top)
        }

        /// The place of subscriber `id` in `joined`; makes the index on first use.
        private func place(of id: UInt64) -> Int? {
            if places == nil { places = index() }
            return places?[id]
        }

        private func index() -> [UInt64: Int] {
            var index = [UInt64: Int](minimumCapacity: count)
            for case let (place, subscriber?) in joined.enumerated() { index[subscriber.id] = place }
            return index
        }

        /// Drops the places of subscribers that left, once they are most of `joined`.
        private func compact() {
            joined.removeAll { $0 == nil }
            if places != nil { places = index() }
        }
    }
}
