public import Foundation

extension ImagePipeline {
    /// The parts a pipeline is made of. Every part is replaceable.
    ///
    /// ```swift
    /// var configuration = ImagePipeline.Configuration()
    /// configuration.dataCache = try DiskCache(directory: DiskCache.defaultDirectory)
    /// let pipeline = ImagePipeline(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Downloads image data.
        public var downloader: ImageDownloader
        /// Decoded images in memory; `nil` disables the memory cache.
        public var memoryCache: (any ImageCaching)?
        /// Encoded images on disk; `nil` disables the disk cache.
        public var dataCache: (any DataCaching)?
        /// Decoders and encoders, asked in order.
        public var coders: ImageCoderRegistry
        /// Limits and options for decoding.
        public var decodingOptions: ImageDecodingOptions

        public init(
            downloader: ImageDownloader = ImageDownloader(),
            memoryCache: (any ImageCaching)? = MemoryCache(),
            dataCache: (any DataCaching)? = nil,
            coders: ImageCoderRegistry = .default,
            decodingOptions: ImageDecodingOptions = .default
        ) {
            self.downloader = downloader
            self.memoryCache = memoryCache
            self.dataCache = dataCache
            self.coders = coders
            self.decodingOptions = decodingOptions
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
