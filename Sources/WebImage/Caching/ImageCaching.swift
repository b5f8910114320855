/// A synchronous, thread-safe store of decoded images (the memory cache).
///
/// Look-ups are synchronous on purpose: a memory hit must cost nanoseconds, not a task hop
/// (SDWebImage queries memory synchronously too).
///
/// ```swift
/// let cache: any ImageCaching = MemoryCache()
/// cache[key] = image
/// let hit = cache[key]
/// ```
public protocol ImageCaching: Sendable {
    subscript(key: String) -> Image? { get nonmutating set }
    func removeAll()
}

/// A store of encoded bytes that survives the process (the disk cache).
///
/// ```swift
/// let disk = try DiskCache(directory: cacheDir)
/// try await disk.store(data, for: key)
/// let bytes = try await disk.data(for: key)
/// ```
public protocol DataCaching: Sendable {
    func data(for key: String) async -> Data?
    func store(_ data: Data, for key: String) async throws
    func remove(key: String) async
    func removeAll() async throws
}

public import Foundation
