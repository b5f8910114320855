public import Foundation
import Logging
import Synchronization
import Tracing

/// Loads images: memory → disk (HTTP-aware) → download → decode → process → store → return.
///
/// SDWebImage's `SDWebImageManager` and Nuke's `ImagePipeline`. Work is shared at every stage:
/// callers of one image key share one job; the jobs of every variant of one URL share one decode
/// per decoding option and one download. Each caller has its own priority, progress and
/// cancellation; the work runs at its callers' highest priority; the last caller to leave
/// cancels it.
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .init(dataCache: try DiskCache(directory: dir)))
/// let response = try await pipeline.image(for: URL(string: "https://example.com/a.jpg")!)
/// print(response.source, response.image.pixelWidth)   // network 640
///
/// let task = pipeline.imageTask(with: ImageRequest(url: url).thumbnail(maxPixelSize: 256))
/// task.priority = .high
/// for await preview in task.previews { show(preview) }
/// let thumbnail = try await task.response.image
/// ```
public final class ImagePipeline: Sendable {
    public let configuration: Configuration
    /// URLs that failed for good recently (SDWebImage's failed-URL list).
    public let failedURLs: FailedURLList
    let dataWork = SharedWork<String, OriginalData, StageEvent>()
    let decodeWork: SharedWork<String, DecodedImage, StageEvent>
    let imageWork: SharedWork<String, ImageResponse, StageEvent>
    let pendingStores = PendingStores()
    /// What each data key's response varied by, for the memory caches' keys.
    let variedKeys = VariedKeys()
    let counters = PipelineCounters()
    let logger = Logger(label: "webimage.pipeline")
    let metrics = PipelineMetrics()
    /// The memory caches' place in the memory budget (images, original bytes, and the bytes the
    /// downloader keeps to resume broken bodies): they count as in use, and give memory back when
    /// work needs room.
    private let budgetRegistrations: [MemoryBudget.Registration]

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        // Decoding and processing (CPU work) run where the configuration says; the data stage
        // only waits for the network and the disk.
        decodeWork = SharedWork(executor: configuration.workExecutor)
        imageWork = SharedWork(executor: configuration.workExecutor)
        budgetRegistrations = Self.registerCaches(of: configuration)
        failedURLs = FailedURLList(timeToLive: configuration.failedURLTimeToLive ?? configuration.httpCachePolicy.negativeTTL)
    }

    /// The shared pipeline, with a memory cache and no disk cache (SDWebImage's `sharedManager`).
    public static let shared = ImagePipeline()

    // MARK: - Images

    /// Loads the image at `url`. See ``image(for:)-(ImageRequest)``.
    public func image(for url: URL) async throws(ImagePipelineError) -> ImageResponse {
        // A plain URL's image key, and its image job's key, is its absolute string: a memory hit
        // needs no request at all, and neither does a caller that joins a running job (only the
        // caller that starts the job makes one). With 10,000 callers of one URL, a request each
        // was a measurable part of a caller's cost.
        // A downloader that adds an identity (a jar cookie, global credentials) makes this a
        // request with one: its keys are not the plain URL's.
        let key = url.absoluteString
        // A user and password in the URL are credentials (``ImageDownloadRequest/credentials``):
        // such a URL's keys are not its string. Any `@` takes the full path (rare in a path).
        if configuration.downloader.mayAddIdentity || variedKeys.isUsed || key.utf8.contains(UInt8(ascii: "@")) {
            return try await image(for: ImageRequest(url: url))
        }
        if let reference = configuration.memoryCache?.reference(forKey: key) {
            metrics.memoryHits.increment()
            return ImageResponse(memoryHit: reference, url: url)
        }
        // Straight to the graph: the memory was just asked with this very key.
        guard !Self.isTracing else { return try await loadTraced(url) }
        do {
            return try await imageWork.value(for: key, subscriber: imageWork.makeSubscriberID(), priority: .normal) {
                let request = ImageRequest(url: url)
                assert(imageJobKey(request) == key, "a plain URL's image job key is its absolute string")
                return imageJob(request)
            }
        } catch {
            throw Self.pipelineError(error)
        }
    }

    /// Loads an image, from the fastest place that has it. With
    /// ``ImageLoadingOptions/refreshCached`` it returns the revalidated image.
    /// - Throws: ``ImagePipelineError``; nothing that fails to load, decode or process is cached.
    public func image(for request: ImageRequest) async throws(ImagePipelineError) -> ImageResponse {
        let request = identified(request)
        if request.options.readsMemory, let reference = configuration.memoryCache?.reference(forKey: memoryImageKey(request)) {
            metrics.memoryHits.increment()
            return ImageResponse(reference: reference, data: nil, source: .memory, request: request)
        }
        return try await load(request, subscriber: imageWork.makeSubscriberID(), onEvent: nil)
    }

    /// Starts loading and returns the task's handle at once: change its priority, cancel it, and
    /// read its events, progress and previews while it runs.
    public func imageTask(with request: ImageRequest) -> ImageTask {
        ImageTask(pipeline: self, request: identified(request))
    }

    /// The original bytes of an image, through the memory-data and disk caches and the network
    /// with the same sharing and HTTP semantics, and no decoding: only the header is read, to
    /// report the format and size and to keep non-images out of the cache.
    public func data(for request: ImageRequest) async throws(ImagePipelineError) -> ImageDataResponse {
        let request = identified(request)
        do {
            let original = try await withSpan("webimage.request") { _ in
                try await self.originalData(for: request, in: nil) { _ in }
            }
            let coders = request.context.coders ?? configuration.coders
            let header: ImageHeader
            do {
                header = try await Self.readHeader(original.data, coders: coders, on: configuration.workExecutor)
            } catch {
                if original.source == .disk, error.blamesData { await configuration.dataCache?.remove(key: request.dataKey) }
                let failure = ImagePipelineError.decodingFailed(error)
                if original.source == .network { failedURLs.remember(failure, for: request.dataKey) }
                throw failure
            }
            await commitOriginal(original, request: request)
            return ImageDataResponse(
                data: original.data, source: original.source, httpResponse: original.httpResponse,
                isRevalidated: original.isRevalidated, isStale: original.isStale, header: header, memoryHolds: original.memoryHolds)
        } catch {
            throw Self.pipelineError(error)
        }
    }

    /// The decoded image in the memory cache, looked up synchronously (no task hop).
    public func cachedImage(forKey key: String) -> Image? {
        configuration.memoryCache?[key]
    }

    /// The decoded image for `request` (its image key) in the memory cache, looked up synchronously.
    public func cachedImage(for request: ImageRequest) -> Image? {
        cachedImage(forKey: memoryImageKey(identified(request)))
    }

    /// The decoded image for `url` in the memory cache, looked up synchronously.
    public func cachedImage(for url: URL) -> Image? {
        let key = url.absoluteString
        return configuration.downloader.mayAddIdentity || variedKeys.isUsed || key.utf8.contains(UInt8(ascii: "@"))
            ? cachedImage(for: ImageRequest(url: url)) : cachedImage(forKey: key)
    }

    /// The original bytes for `request` in the disk cache, if any.
    public func cachedData(for request: ImageRequest) async -> Data? {
        await configuration.dataCache?.data(for: identified(request).dataKey)
    }

    /// Removes `request`'s image (its variant and the original) from every cache.
    public func removeCachedImage(for request: ImageRequest) async {
        let request = identified(request)
        for image in Set([request.imageKey, memoryImageKey(request)]) { configuration.memoryCache?[image] = nil }
        for data in Set([request.dataKey, memoryKey(request, base: request.dataKey)]) { configuration.memoryDataCache?[data] = nil }
        await configuration.dataCache?.remove(key: request.imageKey)
        await configuration.dataCache?.remove(key: request.dataKey)
    }

    /// `request` with the identity this pipeline sees in it: its ``Configuration/identity`` rule,
    /// and what its downloader adds (a cookie from the jar, global headers or credentials). A
    /// request the downloader adds nothing to, under the standard rule, is returned as it is.
    func identified(_ request: ImageRequest) -> ImageRequest {
        let downloader = request.context.downloader ?? configuration.downloader
        let added = downloader.mayAddIdentity ? downloader.addedIdentity(for: request.url) : nil
        guard added != nil || !configuration.identity.isStandard else { return request }
        return request.withIdentity(configuration.identity.digest(request.download, added: added ?? .nothing))
    }

    /// Waits for the cache writes the pipeline did not wait for (requests without
    /// ``ImageLoadingOptions/waitStoreCache``). A command-line tool calls it before exiting.
    public func flushPendingStores() async {
        await pendingStores.waitForAll()
    }

    /// How much work the pipeline really did (downloads, decodes, processings), for tests,
    /// diagnostics and the "is it shared?" question.
    public var statistics: PipelineStatistics { counters.snapshot(jobs: (dataWork.startedCount, decodeWork.startedCount, imageWork.startedCount)) }

    // MARK: - Internals

    // Inlined into its callers: an async function's frame is task memory every waiting caller holds,
    // and this level of its own cost each of 10,000 callers one more 1 KB slab from the task
    // allocator (`WebImageMeasure caller-memory`).
    @inline(__always)
    func load(
        _ request: ImageRequest, subscriber: UInt64, latestPriority: (@Sendable () -> RequestPriority)? = nil,
        onEvent: (@Sendable (StageEvent) -> Void)?
    ) async throws(ImagePipelineError) -> ImageResponse {
        do {
            if request.options.contains(.queryDiskDataSync) {
                // Checked in the calling task: a disk hit costs no shared job.
                return try await makeImage(request, context: InlineContext(priority: request.priority, onEvent: onEvent))
            }
            // No span at all without a tracer: with 10,000 callers of one image, the no-op span's
            // task-local binding was a measurable part of each caller's cost.
            guard Self.isTracing else { return try await sharedImage(for: request, subscriber: subscriber, latestPriority: latestPriority, onEvent: onEvent) }
            return try await withSpan("webimage.request") { span in
                span.attributes["webimage.url"] = request.url.absoluteString
                return try await sharedImage(for: request, subscriber: subscriber, latestPriority: latestPriority, onEvent: onEvent)
            }
        } catch {
            throw Self.pipelineError(error)
        }
    }

    /// A plain URL's load with a tracer installed. Out of line: the span's frame would otherwise
    /// be part of every untraced caller's frame too.
    @inline(never)
    private func loadTraced(_ url: URL) async throws(ImagePipelineError) -> ImageResponse {
        try await load(ImageRequest(url: url), subscriber: imageWork.makeSubscriberID(), onEvent: nil)
    }

    /// Whether an instrument other than the no-op ones is installed (bootstrapped, or bound to
    /// this task by `withTracer`). A comparison of the instrument's exact type: asking for
    /// `InstrumentationSystem.tracer` searches conformances (`is any Tracer`), which perf showed
    /// as a twentieth of each of 10,000 joining callers' cost, and even `is NoOpTracer` went
    /// through the runtime's general cast. An installed instrument that is no tracer only sends
    /// its callers the traced way, with no-op spans.
    static var isTracing: Bool {
        let installed = ObjectIdentifier(type(of: InstrumentationSystem.instrument))
        return installed != ObjectIdentifier(NoOpInstrument.self) && installed != ObjectIdentifier(NoOpTracer.self)
    }

    static func pipelineError(_ error: any Error) -> ImagePipelineError {
        switch error {
        case let error as ImagePipelineError: error
        case let error as ImageDownloadError: error == .cancelled ? .cancelled : .loadingFailed(error)
        case let error as ImageDecodingError: .decodingFailed(error)
        case let error as ImageProcessingError: .processingFailed(error)
        default: .cancelled  // the graph throws only CancellationError of its own
        }
    }
}

/// A stage context for work done in the caller's own task (no shared job).
struct InlineContext: StageContext {
    let priority: RequestPriority
    let onEvent: (@Sendable (StageEvent) -> Void)?
    func onPriorityChange(_ observer: @escaping @Sendable (RequestPriority) -> Void) -> RequestPriority { priority }
    func send(_ event: StageEvent) { onEvent?(event) }
}
