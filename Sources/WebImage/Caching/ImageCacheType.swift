/// Which caches a request may read from and write to (SDWebImage's `SDImageCacheType`).
///
/// ```swift
/// let type: ImageCacheType = .disk
/// if type.includesMemory { cache[key] = image }
/// ```
public enum ImageCacheType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Neither cache: always from the network, and nothing stored.
    case none
    /// Only the memory cache.
    case memory
    /// Only the disk cache.
    case disk
    /// Memory, then disk.
    case all

    public var includesMemory: Bool { self == .memory || self == .all }
    public var includesDisk: Bool { self == .disk || self == .all }
}
