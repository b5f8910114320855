internal import Synchronization
internal import Metrics

/// An in-memory LRU cache of decoded images, bounded by total cost and by count.
///
/// Cost is the image's pixel bytes (``Image/cost``). When either limit is exceeded the least
/// recently used images go first; an image bigger than ``Configuration/maxEntryCostFraction`` of
/// the cost limit is not cached at all (it would flush everything else), as in Nuke.
///
/// ```swift
/// let cache = MemoryCache(configuration: .init(costLimit: 200 << 20))
/// cache["a"] = image
/// cache["a"]?.pixelWidth
/// ```
public final class MemoryCache: ImageCaching {
    public struct Configuration: Sendable {
        /// Total cost (bytes of pixels) kept. Default: 256 MB.
        public var costLimit: Int
        /// Images kept. Default: unlimited.
        public var countLimit: Int
        /// Largest single entry as a fraction of `costLimit`. Default 0.25.
        public var maxEntryCostFraction: Double

        public init(costLimit: Int = 256 << 20, countLimit: Int = .max, maxEntryCostFraction: Double = 0.25) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.maxEntryCostFraction = maxEntryCostFraction
        }
    }

    private struct Entry {
        var image: Image
        var slot: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order = LRUList<String>()
        var totalCost = 0
    }

    public let configuration: Configuration
    private let state = Mutex(State())

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    public subscript(key: String) -> Image? {
        get {
            state.withLock { state in
                guard let entry = state.entries[key] else { return nil }
                state.order.touch(entry.slot)
                return entry.image
            }
        }
        set {
            if let newValue { store(newValue, for: key) } else { remove(key) }
        }
    }

    /// Images held now.
    public var count: Int { state.withLock { $0.entries.count } }
    /// Total cost held now.
    public var totalCost: Int { state.withLock { $0.totalCost } }

    public func removeAll() {
        state.withLock { state in state = State() }
    }

    /// Removes least-recently-used images until the cache is within `cost` and `count`.
    public func trim(toCost cost: Int, count: Int = .max) {
        state.withLock { Self.trim(&$0, cost: cost, count: count) }
    }

    private func store(_ image: Image, for key: String) {
        let cost = image.cost
        guard Double(cost) <= Double(configuration.costLimit) * configuration.maxEntryCostFraction else {
            remove(key)
            return
        }
        state.withLock { state in
            if let old = state.entries[key] {
                state.totalCost -= old.image.cost
                state.order.touch(old.slot)
                state.entries[key] = Entry(image: image, slot: old.slot)
            } else {
                state.entries[key] = Entry(image: image, slot: state.order.insert(key))
            }
            state.totalCost += cost
            Self.trim(&state, cost: configuration.costLimit, count: configuration.countLimit)
        }
    }

    private func remove(_ key: String) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: key) else { return }
            state.order.remove(entry.slot)
            state.totalCost -= entry.image.cost
        }
    }

    private static func trim(_ state: inout State, cost: Int, count: Int) {
        var evicted = 0
        while state.totalCost > cost || state.entries.count > count, let (key, slot) = state.order.leastRecent {
            state.order.remove(slot)
            if let entry = state.entries.removeValue(forKey: key) { state.totalCost -= entry.image.cost }
            evicted += 1
        }
        if evicted > 0 { Counter(label: "webimage_memory_cache_evictions_total").increment(by: evicted) }
    }
}
