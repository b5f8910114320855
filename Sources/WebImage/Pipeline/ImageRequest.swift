public import Foundation

/// What to load and how: the download (URL, headers, timeout, credentials, priority, two-stage
/// look-up), the pipeline's options, and the typed context (processors, thumbnail, cache key
/// filter, store policy, custom coders or downloader).
///
/// A value type with builder-style helpers:
///
/// ```swift
/// let request = ImageRequest(url: url)
///     .priority(.high)
///     .thumbnail(maxPixelSize: 256)
///     .processed(by: [.circle()])
///     .options([.progressiveLoad, .retryFailed])
/// let image = try await pipeline.image(for: request).image
/// ```
public struct ImageRequest: Sendable {
    /// The download: URL, headers, timeout, credentials, validators, priority.
    public var download: ImageDownloadRequest {
        get { storage.download }
        set {
            mutableStorage.download = newValue
            refreshIdentity()
        }
    }
    /// How the pipeline treats caches, decoding and failures (SDWebImage's `SDWebImageOptions`).
    public var options: ImageLoadingOptions {
        get { storage.options }
        set { mutableStorage.options = newValue }
    }
    /// Typed parameters (SDWebImage's `SDWebImageContext`).
    public var context: ImageLoadingContext {
        get { storage.context }
        set { mutableStorage.context = newValue }
    }

    /// Everything in one reference, copied on write: a request is passed and stored at every
    /// stage and in every response, and copying one reference costs a fraction of copying (and
    /// retaining) each field.
    private final class Storage: Sendable {
        // `let`s are not possible with copy-on-write mutation; the instance is mutated only while
        // uniquely referenced (see `mutableStorage`), so no two threads ever see it change.
        nonisolated(unsafe) var download: ImageDownloadRequest
        nonisolated(unsafe) var options: ImageLoadingOptions
        nonisolated(unsafe) var context: ImageLoadingContext
        nonisolated(unsafe) var dataKey: String
        nonisolated(unsafe) var identity: String?

        init(download: ImageDownloadRequest, options: ImageLoadingOptions, context: ImageLoadingContext, dataKey: String, identity: String?) {
            self.download = download
            self.options = options
            self.context = context
            self.dataKey = dataKey
            self.identity = identity
        }

        func copy() -> Storage { Storage(download: download, options: options, context: context, dataKey: dataKey, identity: identity) }
    }

    private var storage: Storage

    private var mutableStorage: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    public init(
        url: URL, priority: RequestPriority = .normal, headers: [HTTPField] = [], cacheKey: String? = nil,
        options: ImageLoadingOptions = [], context: ImageLoadingContext = .init()
    ) {
        self.init(download: ImageDownloadRequest(url: url, priority: priority, headers: headers), options: options, context: context)
        if let cacheKey { self.context.cacheKeyOverride = cacheKey; refreshKey() }
    }

    public init(download: ImageDownloadRequest, options: ImageLoadingOptions = [], context: ImageLoadingContext = .init()) {
        storage = Storage(download: download, options: options, context: context, dataKey: "", identity: nil)
        refreshIdentity()
    }

    public var url: URL {
        get { storage.download.url }
        set { download.url = newValue }
    }

    public var priority: RequestPriority {
        get { storage.download.priority }
        // Not through `download`: a priority does not change the identity (nothing to re-hash).
        set { mutableStorage.download.priority = newValue }
    }

    /// The key of the original bytes (memory-data and disk caches): the URL after the context's
    /// cache key filter (or the explicit cache key), and the request's identity digest if it has
    /// one (see ``RequestIdentity``). Every variant of one URL and identity shares it.
    public var dataKey: String { storage.dataKey }

    /// The identity digest (hex SHA-256 of the credentials and identity-bearing headers), or
    /// `nil` for a request that says nothing about who asks. See ``RequestIdentity``.
    public var identity: String? { storage.identity }

    /// The key of the final image (memory cache, and disk for processed variants): the data key
    /// plus the decoding options, the thumbnail size and the processors' identifiers. Equal to
    /// ``dataKey`` for a plain request, so the original's image and bytes share one name.
    public var imageKey: String {
        // The common case (a plain request) builds no string: the memory-hit path runs this.
        guard storage.context.processors.isEmpty, storage.context.thumbnailMaxPixelSize == nil,
              storage.options.isDisjoint(with: [.decodeFirstFrameOnly, .scaleDownLargeImages])
        else { return CacheKeyEncoding.variant(storage.dataKey, variantSuffix) }
        return storage.dataKey
    }

    /// The key under which ``cacheKey`` was known before there were two keys.
    public var cacheKey: String { imageKey }

    /// The decoding-relevant part of the image key ("" for a plain request).
    var decodeSuffix: String {
        var parts: [String] = []
        if let side = context.thumbnailMaxPixelSize { parts.append("thumb=\(side)") }
        if options.contains(.decodeFirstFrameOnly) { parts.append("first") }
        if options.contains(.scaleDownLargeImages) { parts.append("budget=\(context.scaleDownLimitBytes)") }
        return parts.joined(separator: ";")
    }

    var variantSuffix: String {
        let decode = decodeSuffix
        guard !context.processors.isEmpty else { return decode }
        var processing = "p=" + CacheKeyEncoding.processorList(context.processors.map(\.identifier))
        if options.contains(.transformAnimatedImage) { processing += ";animated" }
        return decode.isEmpty ? processing : decode + ";" + processing
    }

    /// Whether the final image differs from a plain decode of the original.
    var isVariant: Bool { !context.processors.isEmpty || context.thumbnailMaxPixelSize != nil || options.contains(.scaleDownLargeImages) }

    private mutating func refreshKey() {
        let storage = mutableStorage
        let base: String
        if let override = storage.context.cacheKeyOverride {
            base = override
        } else if let filter = storage.context.cacheKeyFilter {
            base = filter.key(storage.download.url)
        } else {
            base = storage.download.url.absoluteString
        }
        storage.dataKey = CacheKeyEncoding.dataKey(base: base, identity: storage.identity)
    }

    /// The standard identity (``RequestIdentity/standard``) of the download, and the keys.
    private mutating func refreshIdentity() {
        mutableStorage.identity = RequestIdentity.standard.digest(storage.download)
        refreshKey()
    }

    /// A copy whose identity is `identity` (the pipeline's rule and what its downloader adds).
    func withIdentity(_ identity: String?) -> ImageRequest {
        guard identity != storage.identity else { return self }
        var copy = self
        copy.mutableStorage.identity = identity
        copy.refreshKey()
        return copy
    }

    mutating func contextChanged() { refreshKey() }
}

// MARK: - Builders

extension ImageRequest {
    /// A copy with `priority`.
    public func priority(_ priority: RequestPriority) -> ImageRequest { with { $0.priority = priority } }
    /// A copy with `options` added.
    public func options(_ options: ImageLoadingOptions) -> ImageRequest { with { $0.options.formUnion(options) } }
    /// A copy whose image is processed by `processors` (after any already set), in order.
    public func processed(by processors: [any ImageProcessing]) -> ImageRequest { with { $0.context.processors += processors } }
    /// A copy decoded at most `maxPixelSize` on its longest side (straight from the compressed
    /// data where the format allows: JPEG DCT scaling, WebP scaled decoding).
    public func thumbnail(maxPixelSize: Int) -> ImageRequest { with { $0.context.thumbnailMaxPixelSize = max(1, maxPixelSize) } }
    /// A copy with an extra header.
    public func header(_ name: String, _ value: String) -> ImageRequest { with { $0.download.headers.append(HTTPField(name, value)) } }
    /// A copy with a per-request timeout.
    public func timeout(_ timeout: Duration) -> ImageRequest { with { $0.download.timeout = timeout } }
    /// A copy answering `401` challenges with `credentials`.
    public func credentials(_ credentials: Credentials) -> ImageRequest { with { $0.download.credentials = credentials } }
    /// A copy whose caches use the key `filter` makes from the URL.
    public func cacheKeyFilter(_ filter: CacheKeyFilter) -> ImageRequest {
        with { $0.context.cacheKeyFilter = filter; $0.contextChanged() }
    }
    /// A copy with a changed context.
    public func context(_ change: (inout ImageLoadingContext) -> Void) -> ImageRequest {
        with { change(&$0.context); $0.contextChanged() }
    }

    private func with(_ change: (inout ImageRequest) -> Void) -> ImageRequest {
        var copy = self
        change(&copy)
        return copy
    }
}
