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
    /// The image for `key` in the box the cache keeps it in (``ImageReference``): the pipeline
    /// hands this box to callers in their ``ImageResponse``, so a cache with a weak layer (as
    /// ``MemoryCache``) finds the image again after evicting it, while a caller still holds it.
    func reference(forKey key: String) -> ImageReference?
    /// Stores the image of `reference` under `key`, keeping that very box.
    func insert(_ reference: ImageReference, forKey key: String)
}

extension ImageCaching {
    /// A new box around the image (a cache without a weak layer keeps no boxes).
    public func reference(forKey key: String) -> ImageReference? { self[key].map(ImageReference.init) }
    /// Stores the image alone.
    public func insert(_ reference: ImageReference, forKey key: String) { self[key] = reference.image }
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
