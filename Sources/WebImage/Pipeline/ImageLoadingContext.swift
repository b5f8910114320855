public import Foundation

/// Typed per-request parameters — SDWebImage's `SDWebImageContext`, with types instead of a
/// dictionary.
///
/// ```swift
/// var context = ImageLoadingContext()
/// context.processors = [.resize(width: 200, height: 200, mode: .fill)]
/// context.cacheKeyFilter = CacheKeyFilter { url in url.absoluteString.components(separatedBy: "?")[0] }
/// let request = ImageRequest(url: url, context: context)
/// ```
public struct ImageLoadingContext: Sendable {
    /// Decode at most this many pixels on the longest side (SDWebImage's `imageThumbnailPixelSize`).
    public var thumbnailMaxPixelSize: Int?
    /// Applied in order after decoding; their identifiers become part of the image key.
    public var processors: [any ImageProcessing]
    /// Makes the data key from the URL (drop tokens, signatures, …) (`imageCacheKeyFilter`).
    public var cacheKeyFilter: CacheKeyFilter?
    /// An explicit data key, overriding the URL and the filter.
    public var cacheKeyOverride: String?
    /// What bytes a processed image is stored on disk as (`imageCacheSerializer`); by default
    /// the source format when it can be encoded, else PNG.
    public var cacheSerializer: CacheSerializer?
    /// Which caches receive the original and the final image.
    public var storePolicy: StorePolicy
    /// Coders for this request instead of the pipeline's (`imageCoder`).
    public var coders: ImageCoderRegistry?
    /// A downloader for this request instead of the pipeline's (`imageLoader`).
    public var downloader: ImageDownloader?
    /// The pixel-byte budget of ``ImageLoadingOptions/scaleDownLargeImages``. Default 64 MB
    /// (a 4096 × 4096 RGBA image).
    public var scaleDownLimitBytes: Int
    /// The shortest time between two progressive previews. Default 0.5 s (Nuke's).
    public var previewInterval: Duration

    public init(
        thumbnailMaxPixelSize: Int? = nil, processors: [any ImageProcessing] = [], cacheKeyFilter: CacheKeyFilter? = nil,
        cacheKeyOverride: String? = nil, cacheSerializer: CacheSerializer? = nil, storePolicy: StorePolicy = .init(),
        coders: ImageCoderRegistry? = nil, downloader: ImageDownloader? = nil, scaleDownLimitBytes: Int = 64 << 20,
        previewInterval: Duration = .milliseconds(500)
    ) {
        self.thumbnailMaxPixelSize = thumbnailMaxPixelSize
        self.processors = processors
        self.cacheKeyFilter = cacheKeyFilter
        self.cacheKeyOverride = cacheKeyOverride
        self.cacheSerializer = cacheSerializer
        self.storePolicy = storePolicy
        self.coders = coders
        self.downloader = downloader
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.previewInterval = previewInterval
    }
}

/// Turns a URL into a cache key (SDWebImage's `SDWebImageCacheKeyFilter`).
///
/// ```swift
/// let stripQuery = CacheKeyFilter { url in url.absoluteString.components(separatedBy: "?")[0] }
/// ```
public struct CacheKeyFilter: Sendable {
    public let key: @Sendable (URL) -> String
    public init(_ key: @escaping @Sendable (URL) -> String) { self.key = key }
}

/// Turns a processed image into the bytes stored on disk (SDWebImage's `SDWebImageCacheSerializer`).
/// Return `nil` to keep it off the disk.
///
/// ```swift
/// let asWebP = CacheSerializer { image, _ in try? ImageCoderRegistry.default.encode(image, as: .webp, quality: 0.8) }
/// ```
public struct CacheSerializer: Sendable {
    public let serialize: @Sendable (_ image: Image, _ originalData: Data?) -> Data?
    public init(_ serialize: @escaping @Sendable (_ image: Image, _ originalData: Data?) -> Data?) { self.serialize = serialize }
}

/// Which caches the original bytes and the final image go to.
///
/// The default keeps the original's bytes on disk (so every variant can be made again without a
/// download) and a processed variant in memory and on disk (so it is not processed again); a
/// plain image is kept decoded in memory and, as its original bytes, on disk.
public struct StorePolicy: Sendable, Hashable {
    /// Where the original bytes go. Default: disk.
    public var original: ImageCacheType
    /// Where the final (decoded, possibly processed) image goes. Default: memory and disk
    /// (on disk only for variants: a plain image's bytes are the original's).
    public var final: ImageCacheType

    public init(original: ImageCacheType = .disk, final: ImageCacheType = .all) {
        self.original = original
        self.final = final
    }
}
