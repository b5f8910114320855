/// A set of cache layers (SDWebImage's `SDImageCacheType`): where a request's original and final
/// image are stored (``StorePolicy``).
///
/// ```swift
/// var policy = StorePolicy()
/// policy.original = .none          // keep only the processed variant
/// let type: ImageCacheType = .all  // memory and disk
/// if type.includesMemory { cache[key] = image }
/// ```
public struct ImageCacheType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The memory cache.
    public static let memory = Self(rawValue: 1)
    /// The disk cache.
    public static let disk = Self(rawValue: 2)
    /// Neither cache.
    public static let none: Self = []
    /// Memory, then disk.
    public static let all: Self = [.memory, .disk]

    public var includesMemory: Bool { contains(.memory) }
    public var includesDisk: Bool { contains(.disk) }
}
