/// Values by key with a cost each, in recency order: the state both memory caches keep under
/// their mutex. Look-up, insert, touch and removal are O(1); an optional expiry per entry is
/// checked only when set (no clock read otherwise).
struct CostLRU<Value> {
    struct Entry {
        var value: Value
        var cost: Int
        var slot: Int
        /// Nanoseconds after ``epoch``; `.max` for none. A plain integer: an optional clock
        /// instant made every copy of an entry call the value witnesses of a resilient type
        /// (measured: a tenth of a memory hit).
        var expires: Int64
    }

    /// The reference point of ``Entry/expires``.
    static var epoch: ContinuousClock.Instant { CostLRUEpoch.instant }

    private(set) var entries: [CacheKey: Entry] = [:]
    private var order = LRUList<CacheKey>()
    private(set) var totalCost = 0

    var count: Int { entries.count }

    /// The value for `key`, made most recent; an expired entry is removed and missed.
    mutating func value(forKey string: String) -> Value? {
        let key = CacheKey(string)
        guard let entry = entries[key] else { return nil }
        if entry.expires != .max, (ContinuousClock.now - Self.epoch).nanoseconds >= entry.expires {
            remove(key)
            return nil
        }
        order.touch(entry.slot)
        return entry.value
    }

    mutating func insert(_ value: Value, cost: Int, forKey string: String, expires instant: ContinuousClock.Instant?) {
        let key = CacheKey(string)
        let expires = instant.map { ($0 - Self.epoch).nanoseconds } ?? .max
        if let old = entries[key] {
            totalCost -= old.cost
            order.touch(old.slot)
            entries[key] = Entry(value: value, cost: cost, slot: old.slot, expires: expires)
        } else {
            entries[key] = Entry(value: value, cost: cost, slot: order.insert(key), expires: expires)
        }
        totalCost += cost
    }

    @discardableResult
    mutating func remove(_ string: String) -> Value? {
        remove(CacheKey(string))
    }

    @discardableResult
    private mutating func remove(_ key: CacheKey) -> Value? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        order.remove(entry.slot)
        totalCost -= entry.cost
        return entry.value
    }

    /// Removes least recently used entries until within `cost` and `count`; `evicted` sees each.
    /// `evicted` may take parts of the value out (it receives the only copy).
    mutating func trim(toCost cost: Int, count: Int, evicted: (String, inout Value) -> Void = { _, _ in }) -> Int {
        var removed = 0
        while totalCost > cost || entries.count > count, let (key, _) = order.leastRecent {
            if var value = remove(key) { evicted(key.string, &value) }
            removed += 1
        }
        return removed
    }

    mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
        totalCost = 0
    }
}

/// One process-wide reference instant for the caches' expiry times.
enum CostLRUEpoch {
    static let instant = ContinuousClock.now
}
