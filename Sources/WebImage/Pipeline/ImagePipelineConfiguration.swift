public import Foundation

extension ImagePipeline {
    /// The parts a pipeline is made of. Every part is replaceable.
    ///
    /// ```swift
    /// var configuration = ImagePipeline.Configuration()
    /// configuration.dataCache = try DiskCache(directory: DiskCache.defaultDirectory)
    /// configuration.httpCachePolicy.defaultMaxAge = .seconds(3600)
    /// let pipeline = ImagePipeline(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Downloads image data.
        public var downloader: ImageDownloader
        /// Decoded images in memory; `nil` disables the memory cache.
        public var memoryCache: (any ImageCaching)?
        /// Original bytes in memory, read with ``ImageLoadingOptions/queryMemoryData``; `nil` (the
        /// default) disables it.
        public var memoryDataCache: (any DataMemoryCaching)?
        /// Encoded images on disk; `nil` disables the disk cache.
        public var dataCache: (any DataCaching)?
        /// Decoders and encoders, asked in order.
        public var coders: ImageCoderRegistry
        /// Limits and options for decoding.
        public var decodingOptions: ImageDecodingOptions
        /// What HTTP caching headers do to the disk cache (freshness, revalidation, stale-if-error).
        public var httpCachePolicy: HTTPCachePolicy
        /// How long a URL that failed for good (404, 410, undecodable) fails without a request.
        /// Default: ``HTTPCachePolicy/negativeTTL`` (60 s).
        public var failedURLTimeToLive: Duration?
        /// Where decoding and processing run: `nil` (the default) on Swift's cooperative pool,
        /// as any task; an ``ImageWorkExecutor`` keeps them on threads of their own, so that a
        /// server's other tasks are never starved by image work (`webimage serve` renders so).
        ///
        /// ```swift
        /// configuration.workExecutor = ImageWorkExecutor(threads: 2)
        /// ```
        public var workExecutor: ImageWorkExecutor?
        /// The memory decoded pixels may take (see ``MemoryBudget``): a decode or a processing
        /// step reserves what it will allocate first, the memory cache (when it is a
        /// ``MemoryCache``) gives memory back to make room, and work waits for room at most
        /// ``memoryBudgetWait``. Default: ``MemoryBudget/shared``, one per process; `nil`: none.
        public var memoryBudget: MemoryBudget? = .shared
        /// How long a decode may wait for room in ``memoryBudget`` before it fails with
        /// ``ImagePipelineError/overBudget(_:)`` (30 s).
        public var memoryBudgetWait: Duration = .seconds(30)
        /// How long a downloaded body's declared `Content-Length` stays reserved whole in
        /// ``memoryBudget`` (2 s). After it, the part not yet received goes back to the budget and
        /// the body grows in steps granted from free room, so a source that declares a large body
        /// and sends it slowly holds only what it has sent.
        ///
        /// ```swift
        /// configuration.memoryBudgetBodyLease = .seconds(5)  // slow, trusted origins
        /// ```
        public var memoryBudgetBodyLease: Duration = .seconds(2)
        /// Which request headers say who asks (beyond credentials, `Authorization` and `Cookie`):
        /// callers share work and cached images only with callers of the same identity.
        public var identity: RequestIdentity

        public init(
            downloader: ImageDownloader = ImageDownloader(),
            memoryCache: (any ImageCaching)? = MemoryCache(),
            memoryDataCache: (any DataMemoryCaching)? = nil,
            dataCache: (any DataCaching)? = nil,
            coders: ImageCoderRegistry = .default,
            decodingOptions: ImageDecodingOptions = .default,
            httpCachePolicy: HTTPCachePolicy = .init(),
            failedURLTimeToLive: Duration? = nil,
            identity: RequestIdentity = .standard
        ) {
            self.identity = identity
            self.downloader = downloader
            self.memoryCache = memoryCache
            self.memoryDataCache = memoryDataCache
            self.dataCache = dataCache
            self.coders = coders
            self.decodingOptions = decodingOptions
            self.httpCachePolicy = httpCachePolicy
            self.failedURLTimeToLive = failedURLTimeToLive
        }
    }
}

extension DiskCache {
    /// `$XDG_CACHE_HOME/webimage`, else `~/.cache/webimage`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("webimage", isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".cache", isDirectory: true)
            .appendingPathComponent("webimage", isDirectory: true)
    }
}
