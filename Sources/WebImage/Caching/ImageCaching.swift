public import Foundation

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
public protocol ImageCaching: AnyObject, Sendable {
    subscript(key: String) -> Image? { get set }
    func removeAll()
}

/// A synchronous, thread-safe store of original image bytes in memory (the memory-data cache,
/// read with ``ImageLoadingOptions/queryMemoryData``).
///
/// ```swift
/// let cache: any DataMemoryCaching = MemoryDataCache()
/// cache[key] = data
/// ```
public protocol DataMemoryCaching: AnyObject, Sendable {
    subscript(key: String) -> Data? { get set }
    func removeAll()
}
