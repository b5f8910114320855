/// How the pipeline treats caches, decoding and failures for one request — SDWebImage's
/// `SDWebImageOptions`, with Swift names (docs/LIBRARY.md has the mapping table).
///
/// ```swift
/// let request = ImageRequest(url: url, options: [.refreshCached, .retryFailed])
/// ```
public struct ImageLoadingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Try again a URL on the failed list (`SDWebImageRetryFailed`).
    public static let retryFailed = Self(rawValue: 1 << 0)
    /// Deliver partial images (``ImageTask/previews``) while data arrives (`SDWebImageProgressiveLoad`).
    public static let progressiveLoad = Self(rawValue: 1 << 1)
    /// Deliver the cached image, revalidate it with the origin, and deliver again only if it
    /// changed (`SDWebImageRefreshCached`).
    public static let refreshCached = Self(rawValue: 1 << 2)
    /// Never touch the network: a miss fails with ``ImagePipelineError/notCached`` (`SDWebImageFromCacheOnly`).
    public static let fromCacheOnly = Self(rawValue: 1 << 3)
    /// Skip every cache read and download again; the result is still stored (`SDWebImageFromLoaderOnly`).
    public static let fromLoaderOnly = Self(rawValue: 1 << 4)
    /// Also look in the memory-data cache of original bytes (`SDWebImageQueryMemoryData`).
    public static let queryMemoryData = Self(rawValue: 1 << 5)
    /// Query the disk cache in the calling task before joining shared work
    /// (`SDWebImageQueryDiskDataSync`): a disk hit costs no job and no hop.
    public static let queryDiskDataSync = Self(rawValue: 1 << 6)
    /// Decode large images at a reduced size so the pixels fit ``ImageLoadingContext/scaleDownLimitBytes``
    /// (`SDWebImageScaleDownLargeImages`).
    public static let scaleDownLargeImages = Self(rawValue: 1 << 7)
    /// Decode only the first frame of an animation (`SDWebImageDecodeFirstFrameOnly`).
    public static let decodeFirstFrameOnly = Self(rawValue: 1 << 8)
    /// Data only: no pixels are decoded. The response's image carries the header's format, size
    /// and frame count with no pixels (``Image/isDecoded`` is false) and its `data` holds the
    /// bytes, like SDWebImage's lazily decoded images (`SDWebImageAvoidDecodeImage`).
    public static let avoidDecode = Self(rawValue: 1 << 9)
    /// Return only after the caches have stored the result (`SDWebImageWaitStoreCache`).
    public static let waitStoreCache = Self(rawValue: 1 << 10)
    /// Apply processors to every frame of an animation, not only the first (`SDWebImageTransformAnimatedImage`).
    /// With ``decodeFirstFrameOnly`` too, the one frame decoded stands for the animation (for a
    /// caller that streams the other frames itself, as `webimage fetch` does): the processors'
    /// output over all the source's frames must fit ``ImageProcessors/maxPixelCount``, checked
    /// before the frame is processed.
    public static let transformAnimatedImage = Self(rawValue: 1 << 11)
    /// Do not read from the memory cache (`SDWebImageContextStoreCacheType`/`queryCacheType` without memory).
    public static let disableMemoryRead = Self(rawValue: 1 << 12)
    /// Do not write to the memory cache.
    public static let disableMemoryWrite = Self(rawValue: 1 << 13)
    /// Do not read from the disk cache.
    public static let disableDiskRead = Self(rawValue: 1 << 14)
    /// Do not write to the disk cache.
    public static let disableDiskWrite = Self(rawValue: 1 << 15)

    /// No cache at all, in either direction.
    public static let ignoreCaches: Self = [.disableMemoryRead, .disableMemoryWrite, .disableDiskRead, .disableDiskWrite]

    var readsMemory: Bool { !contains(.disableMemoryRead) && !contains(.fromLoaderOnly) && !contains(.refreshCached) }
    var readsDisk: Bool { !contains(.disableDiskRead) && !contains(.fromLoaderOnly) }
}
