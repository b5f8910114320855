import Synchronization

/// The request headers each data key's last response varied by (its `Vary` names), so that the
/// memory caches can keep images of such responses: under the key plus the values the request
/// sent (``ImagePipeline/memoryKey(_:base:names:)``), never under the key alone.
///
/// Bounded: at ``capacity`` keys it starts again empty. A key it has forgotten only costs a
/// memory miss (the disk's recorded values still decide), never a wrong image: varied images
/// are never kept under a plain key.
final class VariedKeys: Sendable {
    static let capacity = 4_096

    private let names = Locked<[String: [String]]>([:])
    /// Whether any response has varied yet: the common case skips the lock.
    private let used = Atomic<Bool>(false)

    var isUsed: Bool { used.load(ordering: .relaxed) }

    /// What `dataKey`'s response varied by (`nil`: nothing, or forgotten).
    func names(for dataKey: String) -> [String]? {
        guard isUsed else { return nil }
        return names.withLock { $0[dataKey] }
    }

    /// Records `varied` (`nil`: the response had no `Vary`) for `dataKey`.
    func record(_ varied: [String]?, for dataKey: String) {
        guard let varied else {
            if isUsed { names.withLock { _ = $0.removeValue(forKey: dataKey) } }
            return
        }
        used.store(true, ordering: .relaxed)
        names.withLock { table in
            if table.count >= Self.capacity, table[dataKey] == nil { table.removeAll(keepingCapacity: true) }
            table[dataKey] = varied
        }
    }
}
