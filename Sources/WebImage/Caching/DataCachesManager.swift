public import Foundation

/// Several ``DataCaching``s used as one, first has the highest priority (SDWebImage's
/// `SDImageCachesManager`), with a policy for each operation.
///
/// ```swift
/// let caches = DataCachesManager(caches: [fastLocal, sharedVolume],
///                                queryPolicy: .serial, storePolicy: .highestPriorityOnly)
/// let entry = await caches.entry(for: key)  // first cache that has it
/// ```
public struct DataCachesManager: DataCaching {
    public enum Policy: String, Sendable, Codable, CaseIterable {
        /// Only the first cache.
        case highestPriorityOnly
        /// Only the last cache.
        case lowestPriorityOnly
        /// One after the other in priority order: a query stops at the first hit, a store or a
        /// removal goes to every cache.
        case serial
        /// Every cache at once: a query answers the highest-priority hit.
        case concurrent
    }

    public var caches: [any DataCaching]
    public var queryPolicy: Policy
    public var storePolicy: Policy
    public var removePolicy: Policy

    public init(caches: [any DataCaching], queryPolicy: Policy = .serial, storePolicy: Policy = .serial, removePolicy: Policy = .concurrent) {
        self.caches = caches
        self.queryPolicy = queryPolicy
        self.storePolicy = storePolicy
        self.removePolicy = removePolicy
    }

    public func entry(for key: String) async -> DataCacheEntry? {
        switch queryPolicy {
        case .highestPriorityOnly: return await caches.first?.entry(for: key)
        case .lowestPriorityOnly: return await caches.last?.entry(for: key)
        case .serial:
            for cache in caches { if let entry = await cache.entry(for: key) { return entry } }
            return nil
        case .concurrent:
            let found = await withTaskGroup(of: (Int, DataCacheEntry?).self) { group in
                for (position, cache) in caches.enumerated() { group.addTask { (position, await cache.entry(for: key)) } }
                var hits: [(Int, DataCacheEntry)] = []
                for await (position, entry) in group { if let entry { hits.append((position, entry)) } }
                return hits.min { $0.0 < $1.0 }?.1
            }
            return found
        }
    }

    /// The size the cache that would answer ``entry(for:)`` reports: for the serial and
    /// concurrent policies, the first size known in priority order; ``CachedByteCount/absent``
    /// only when every cache knows it has no entry.
    public func byteCount(for key: String) async -> CachedByteCount {
        switch queryPolicy {
        case .highestPriorityOnly: return await caches.first?.byteCount(for: key) ?? .absent
        case .lowestPriorityOnly: return await caches.last?.byteCount(for: key) ?? .absent
        case .serial, .concurrent:
            var answer = CachedByteCount.absent
            for cache in caches {
                switch await cache.byteCount(for: key) {
                case .bytes(let size): return .bytes(size)
                case .unknown: answer = .unknown
                case .absent: break
                }
            }
            return answer
        }
    }

    public func store(_ data: Data, metadata: CacheMetadata, for key: String) async throws {
        try await each(storePolicy) { try await $0.store(data, metadata: metadata, for: key) }
    }

    public func updateMetadata(_ metadata: CacheMetadata, for key: String) async {
        try? await each(storePolicy) { await $0.updateMetadata(metadata, for: key) }
    }

    public func remove(key: String) async {
        try? await each(removePolicy) { await $0.remove(key: key) }
    }

    public func removeAll() async throws {
        try await each(removePolicy) { try await $0.removeAll() }
    }

    /// Runs `operation` on the caches `policy` selects; the first error is rethrown after all ran.
    private func each(_ policy: Policy, _ operation: @escaping @Sendable (any DataCaching) async throws -> Void) async throws {
        let selected: [any DataCaching] = switch policy {
        case .highestPriorityOnly: Array(caches.prefix(1))
        case .lowestPriorityOnly: Array(caches.suffix(1))
        case .serial, .concurrent: caches
        }
        if policy == .concurrent {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for cache in selected { group.addTask { try await operation(cache) } }
                try await group.waitForAll()
            }
            return
        }
        var firstError: (any Error)?
        for cache in selected {
            do { try await operation(cache) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }
}
