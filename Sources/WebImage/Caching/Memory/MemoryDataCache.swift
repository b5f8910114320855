public import Foundation

/// Original (encoded) image bytes in memory, LRU by byte count: the pipeline's "query memory
/// data" option (SDWebImage's `SDImageCacheQueryMemoryData`), kept apart from the decoded
/// images and much smaller. Synchronous like ``MemoryCache``.
///
/// ```swift
/// let data = MemoryDataCache(costLimit: 20 << 20)
/// data[url.absoluteString] = response.data
/// if let bytes = data[url.absoluteString] { write(bytes) }
/// ```
public final class MemoryDataCache: DataMemoryCaching {
    /// Total bytes kept; past it, least recently used entries go down to 60 % of it.
    public let costLimit: Int
    /// Entries above this share of `costLimit` are not kept.
    public let maxEntryCostFraction: Double
    private let state = Locked(CostLRU<Data>())

    /// - Parameters:
    ///   - costLimit: default 20 MB, a fifth of the image cache's default.
    ///   - maxEntryCostFraction: the largest entry kept, as a fraction of `costLimit` (larger ones are not stored).
    public init(costLimit: Int = 20_000_000, maxEntryCostFraction: Double = 0.1) {
        self.costLimit = costLimit
        self.maxEntryCostFraction = maxEntryCostFraction
    }

    public subscript(key: String) -> Data? {
        get { state.withLock { $0.value(forKey: key) } }
        set {
            guard let newValue, Double(newValue.count) <= Double(costLimit) * maxEntryCostFraction else {
                state.withLock { _ = $0.remove(key) }
                return
            }
            state.withLock { lru in
                lru.insert(newValue, cost: newValue.count, forKey: key, expires: nil)
                if lru.totalCost > costLimit { _ = lru.trim(toCost: costLimit * 6 / 10, count: .max) }
            }
        }
    }

    /// Entries held now.
    public var count: Int { state.withLock { $0.count } }
    /// Bytes held now.
    public var totalCost: Int { state.withLock { $0.totalCost } }

    /// Removes least recently used entries until at most `cost` bytes remain (memory pressure).
    public func trim(toCost cost: Int) {
        state.withLock { _ = $0.trim(toCost: cost, count: .max) }
    }

    public func removeAll() {
        state.withLock { $0.removeAll() }
    }
}
