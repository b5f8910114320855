internal import Metrics

/// An in-memory LRU cache of decoded images, bounded by total cost, by count and optionally by
/// time, with an optional weak layer.
///
/// - Cost is ``Image/cost`` (pixel bytes × frames). Past ``Configuration/costLimit`` the least
///   recently used images are purged down to ``Configuration/preferredCostAfterPurge``
///   (AFAutoPurgingImageCache); an image above ``Configuration/maxEntryCostFraction`` of the
///   limit is not kept at all.
/// - **Weak layer** (SDWebImage's `shouldUseWeakMemoryCache`). `Image` is a value: a copy of
///   its pixel arrays says nothing about who still uses them, so "alive elsewhere" is defined
///   through ``ImageReference``, the class box every entry is kept in, which the cache hands out
///   (``reference(forKey:)``) or is given (``insert(_:forKey:)``). When an entry is evicted while
///   its box is held by someone else, the cache keeps a weak reference to it, and a later look-up finds the image
///   again (and re-inserts it) for as long as that holder keeps it alive.
/// - Look-ups are synchronous: one mutex, one dictionary look-up, an O(1) LRU touch; the weak
///   layer and the clock are consulted only on a miss or when a TTL is set.
///
/// ```swift
/// let cache = MemoryCache(configuration: .init(costLimit: 200 << 20))
/// cache["a"] = image
/// let shown = cache.reference(forKey: "a")  // keep it while the image is on screen
/// cache.trim(toCost: 0)                        // memory pressure
/// cache["a"]?.pixelWidth                       // still found: `shown` keeps it alive
/// ```
public final class MemoryCache: ImageCaching {
    /// Every entry is an `ImageReference`: a hit copies one pointer out of the dictionary (an
    /// `Image` held inline was copied field by field, twice, on each hit — measured).
    struct State {
        var lru = CostLRU<ImageReference>()
        var weak: [String: WeakImageReference] = [:]
        var weakPruneThreshold = 64
    }

    public let configuration: Configuration
    let state = Locked(State())
    private let evictions = Counter(label: "webimage_memory_cache_evictions_total")

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    public subscript(key: String) -> Image? {
        get {
            // The box comes out of the lock, the image out of the box after it: the lock's closure is
            // generic over its result, and an `Image` returned through it was copied by value
            // witnesses (a tenth of a hit, measured).
            let reference = state.withLock { state in state.lru.value(forKey: key) ?? Self.revive(key, &state, self) }
            return reference?.image
        }
        set {
            if let newValue { store(ImageReference(newValue), for: key) } else { remove(key) }
        }
    }

    /// The image for `key` in its shared box; while anyone holds it, the weak layer can find the
    /// image again after an eviction.
    public func reference(forKey key: String) -> ImageReference? {
        state.withLock { state in state.lru.value(forKey: key) ?? Self.revive(key, &state, self) }
    }

    /// Stores the image of `reference` under `key`, keeping the reference for the weak layer.
    public func insert(_ reference: ImageReference, forKey key: String) {
        store(reference, for: key)
    }

    /// Images held now (the weak layer not counted).
    public var count: Int { state.withLock { $0.lru.count } }
    /// Total cost held now.
    public var totalCost: Int { state.withLock { $0.lru.totalCost } }

    public func removeAll() {
        state.withLock { state in state = State() }
    }

    /// Removes least recently used images until the cache is within `cost` and `count` (the
    /// memory-pressure hook). Evicted images still referenced elsewhere stay findable.
    public func trim(toCost cost: Int, count: Int = .max) {
        state.withLock { Self.trim(&$0, cost: cost, count: count, self) }
    }

    private func store(_ reference: ImageReference, for key: String) {
        let cost = reference.image.cost
        guard Double(cost) <= Double(configuration.costLimit) * configuration.maxEntryCostFraction else {
            remove(key)
            return
        }
        let expires = configuration.timeToLive.map { ContinuousClock.now.advanced(by: $0) }
        state.withLock { state in
            state.weak[key] = nil
            state.lru.insert(reference, cost: cost, forKey: key, expires: expires)
            if state.lru.totalCost > configuration.costLimit {
                Self.trim(&state, cost: configuration.preferredCostAfterPurge, count: configuration.countLimit, self)
            } else if state.lru.count > configuration.countLimit {
                Self.trim(&state, cost: .max, count: configuration.countLimit, self)
            }
        }
    }

    private func remove(_ key: String) {
        state.withLock { state in
            state.lru.remove(key)
            state.weak[key] = nil
        }
    }

    private static func trim(_ state: inout State, cost: Int, count: Int, _ cache: MemoryCache) {
        let weakLayer = cache.configuration.usesWeakLayer
        var kept: [(String, ImageReference)] = []
        let evicted = state.lru.trim(toCost: cost, count: count) { key, reference in
            // `reference` is the cache's only copy now: if it is not unique, someone else holds it.
            if weakLayer && !isKnownUniquelyReferenced(&reference) { kept.append((key, reference)) }
        }
        for (key, reference) in kept { state.weak[key] = WeakImageReference(reference) }
        if state.weak.count > state.weakPruneThreshold {
            state.weak = state.weak.filter { $0.value.reference != nil }
            state.weakPruneThreshold = max(64, state.weak.count * 2)
        }
        if evicted > 0 { cache.evictions.increment(by: evicted) }
    }

    /// On a miss: the weakly held image for `key`, re-inserted, if its holder still keeps it.
    private static func revive(_ key: String, _ state: inout State, _ cache: MemoryCache) -> ImageReference? {
        guard !state.weak.isEmpty, let weak = state.weak.removeValue(forKey: key), let reference = weak.reference else { return nil }
        let expires = cache.configuration.timeToLive.map { ContinuousClock.now.advanced(by: $0) }
        state.lru.insert(reference, cost: reference.image.cost, forKey: key, expires: expires)
        if state.lru.totalCost > cache.configuration.costLimit {
            trim(&state, cost: cache.configuration.preferredCostAfterPurge, count: cache.configuration.countLimit, cache)
        }
        return reference
    }
}
