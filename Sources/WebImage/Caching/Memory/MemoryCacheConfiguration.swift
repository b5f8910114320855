import Foundation

extension MemoryCache {
    /// Limits of a memory cache, AFAutoPurgingImageCache-style: when the total cost passes
    /// ``costLimit``, least recently used images are purged down to ``preferredCostAfterPurge``.
    ///
    /// ```swift
    /// let cache = MemoryCache(configuration: .init(costLimit: 200 << 20, preferredCostAfterPurge: 120 << 20))
    /// ```
    public struct Configuration: Sendable, Equatable {
        /// Total cost (``Image/cost``: pixel bytes × frames) allowed. Default ``MemoryCache/defaultCostLimit``.
        public var costLimit: Int
        /// What a purge leaves. Default 60 % of ``costLimit`` (100 MB → 60 MB, as in AF).
        public var preferredCostAfterPurge: Int
        /// Images kept. Default: unlimited.
        public var countLimit: Int
        /// Largest single entry as a fraction of `costLimit`; larger images are not kept. Default 0.1.
        public var maxEntryCostFraction: Double
        /// How long an entry may be served after it was stored; `nil` (default): no expiry.
        public var timeToLive: Duration?
        /// Keep weak references to evicted images that are still held elsewhere (through an
        /// ``ImageReference`` the cache handed out) and find them again. Default on.
        public var usesWeakLayer: Bool

        public init(
            costLimit: Int = MemoryCache.defaultCostLimit, preferredCostAfterPurge: Int? = nil, countLimit: Int = .max,
            maxEntryCostFraction: Double = 0.1, timeToLive: Duration? = nil, usesWeakLayer: Bool = true
        ) {
            self.costLimit = costLimit
            self.preferredCostAfterPurge = preferredCostAfterPurge ?? Int(Double(costLimit) * 0.6)
            self.countLimit = countLimit
            self.maxEntryCostFraction = maxEntryCostFraction
            self.timeToLive = timeToLive
            self.usesWeakLayer = usesWeakLayer
        }
    }

    /// 100 MB, or — when the process runs under a cgroup memory limit — a quarter of that limit,
    /// at least 16 MB and at most 1 GB. Host RAM is never used: a container sees the host's.
    public static let defaultCostLimit: Int = costLimit(forMemoryLimit: cgroupMemoryLimit())

    /// The default capacity under a cgroup memory limit of `limit` bytes (nil: none).
    public static func costLimit(forMemoryLimit limit: Int?) -> Int {
        guard let limit else { return 100_000_000 }
        return min(max(limit / 4, 16_000_000), 1_000_000_000)
    }
}

extension MemoryCache {
    /// The memory limit of this process's cgroup, if one is set: cgroup v2 `memory.max` of the
    /// process's group (or of the mount's root), else cgroup v1 `memory.limit_in_bytes`; "max"
    /// and v1's near-`Int64.max` "unlimited" mean none.
    ///
    /// ```swift
    /// let limit = MemoryCache.cgroupMemoryLimit()  // nil outside a limited container
    /// ```
    public static func cgroupMemoryLimit(root: String = "/sys/fs/cgroup", selfCgroup: String = "/proc/self/cgroup") -> Int? {
        let groups = (try? String(contentsOfFile: selfCgroup, encoding: .utf8)) ?? ""
        var v2Path = "", v1Path = ""
        for line in groups.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty { v2Path = String(parts[2]) }
            if parts[1].split(separator: ",").contains("memory") { v1Path = String(parts[2]) }
        }
        let candidates = [
            "\(root)\(v2Path)/memory.max", "\(root)/memory.max",
            "\(root)/memory\(v1Path)/memory.limit_in_bytes", "\(root)/memory/memory.limit_in_bytes",
        ]
        for path in candidates {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if value == "max" { return nil }
            guard let bytes = Int(value) else { continue }
            return bytes >= 1 << 60 ? nil : bytes
        }
        return nil
    }
}
