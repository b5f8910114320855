public import Foundation
internal import Logging
internal import Metrics

/// Loads images: memory cache → disk cache → download → decode → store → return.
///
/// SDWebImage's `SDWebImageManager` and Nuke's `ImagePipeline`. Concurrent requests for the
/// same key share one load (one download, one decode); each caller can cancel on its own.
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .init(dataCache: try DiskCache(directory: dir)))
/// let response = try await pipeline.image(for: URL(string: "https://example.com/a.jpg")!)
/// print(response.source, response.image.pixelWidth)   // network 640
/// ```
public final class ImagePipeline: Sendable {
    public let configuration: Configuration
    private let loads = TaskCoalescer<String, ImageResponse>()
    private let logger = Logger(label: "webimage.pipeline")
    private let metrics = PipelineMetrics()

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Loads the image at `url`. See ``image(for:)-(ImageRequest)``.
    public func image(for url: URL) async throws(ImagePipelineError) -> ImageResponse {
        try await image(for: ImageRequest(url: url))
    }

    /// Loads an image, from the fastest place that has it.
    /// - Throws: ``ImagePipelineError``; nothing that fails to load or decode is cached.
    public func image(for request: ImageRequest) async throws(ImagePipelineError) -> ImageResponse {
        let key = request.cacheKey
        if let image = cachedImage(forKey: key) {
            metrics.memoryHits.increment()
            return ImageResponse(image: image, data: nil, source: .memory, request: request)
        }
        do {
            var response = try await loads.value(for: key) { try await self.load(request) }
            response.request = request
            return response
        } catch let error as ImagePipelineError {
            throw error
        } catch {
            throw .cancelled  // the coalescer throws only CancellationError of its own
        }
    }

    /// The decoded image in the memory cache, looked up synchronously (no task hop).
    public func cachedImage(forKey key: String) -> Image? {
        configuration.memoryCache?[key]
    }

    /// The decoded image for `url` in the memory cache, looked up synchronously.
    public func cachedImage(for url: URL) -> Image? {
        cachedImage(forKey: ImageRequest(url: url).cacheKey)
    }

    /// The encoded bytes for `request` in the disk cache, if any.
    public func cachedData(for request: ImageRequest) async -> Data? {
        await configuration.dataCache?.data(for: request.cacheKey)
    }

    /// Removes `request`'s image from every cache.
    public func removeCachedImage(for request: ImageRequest) async {
        configuration.memoryCache?[request.cacheKey] = nil
        await configuration.dataCache?.remove(key: request.cacheKey)
    }

    // MARK: - The load, shared by all callers of one key

    private func load(_ request: ImageRequest) async throws -> ImageResponse {
        let key = request.cacheKey
        if let image = cachedImage(forKey: key) {
            return ImageResponse(image: image, data: nil, source: .memory, request: request)
        }
        if let dataCache = configuration.dataCache, let data = await dataCache.data(for: key) {
            do {
                let image = try decode(data, key: key)
                configuration.memoryCache?[key] = image
                metrics.diskHits.increment()
                return ImageResponse(image: image, data: data, source: .disk, request: request)
            } catch {
                // A damaged entry is removed and the image is fetched again.
                logger.warning("undecodable disk cache entry removed", metadata: ["key": "\(key)", "error": "\(error)"])
                await dataCache.remove(key: key)
            }
        }
        let download: DownloadResult
        do {
            download = try await configuration.downloader.download(request.url, priority: request.priority, headers: request.headers)
        } catch {
            throw error == .cancelled ? ImagePipelineError.cancelled : ImagePipelineError.loadingFailed(error)
        }
        let image: Image
        do {
            image = try decode(download.data, key: key)
        } catch {
            logger.debug("decoding failed", metadata: ["url": "\(request.url)", "error": "\(error)"])
            throw ImagePipelineError.decodingFailed(error)
        }
        configuration.memoryCache?[key] = image
        if let dataCache = configuration.dataCache {
            do {
                try await dataCache.store(download.data, for: key)
            } catch {
                // The image is still delivered; only its persistence failed (logged by the cache).
                metrics.diskStoreFailures.increment()
            }
        }
        metrics.networkLoads.increment()
        return ImageResponse(image: image, data: download.data, source: .network, httpResponse: download.response, request: request)
    }

    private func decode(_ data: Data, key: String) throws(ImageDecodingError) -> Image {
        var options = configuration.decodingOptions
        options.scale = Image.scaleFactor(forKey: key)
        return try configuration.coders.decode(data, options: options)
    }
}

/// The pipeline's swift-metrics instruments, made once per pipeline (not per image).
struct PipelineMetrics: Sendable {
    let memoryHits = Counter(label: "webimage_pipeline_images_total", dimensions: [("source", "memory")])
    let diskHits = Counter(label: "webimage_pipeline_images_total", dimensions: [("source", "disk")])
    let networkLoads = Counter(label: "webimage_pipeline_images_total", dimensions: [("source", "network")])
    let diskStoreFailures = Counter(label: "webimage_disk_cache_store_failures_total")
}
