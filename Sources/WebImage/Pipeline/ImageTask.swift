import Foundation

/// A running image load, returned at once by ``ImagePipeline/imageTask(with:)``: change its
/// priority, cancel it, and follow it through ``events``, ``progress`` and ``previews``.
///
/// Each sequence buffers from the start, so nothing is missed by reading it late; each is
/// meant for one reader.
///
/// ```swift
/// let task = pipeline.imageTask(with: ImageRequest(url: url, options: .progressiveLoad))
/// Task { for await preview in task.previews { show(preview) } }
/// task.priority = .veryHigh          // the user scrolled to it
/// let image = try await task.response.image
/// ```
public final class ImageTask: Sendable {
    /// What happens to a task, in order: started, progress and previews, then one or two
    /// responses (two with ``ImageLoadingOptions/refreshCached`` when the image changed) and
    /// finished.
    public enum Event: Sendable {
        case started
        case progress(DownloadProgress)
        case preview(Image)
        /// A response; `isFinal` is false for the cached image delivered before revalidation.
        case response(ImageResponse, isFinal: Bool)
        case finished(Result<ImageResponse, ImagePipelineError>)
    }

    public let request: ImageRequest
    public let events: AsyncStream<Event>
    public let progress: AsyncStream<DownloadProgress>
    public let previews: AsyncStream<Image>
    private let sinks: Sinks
    private let state: Locked<RequestPriority>
    private let subscriber: UInt64
    private let pipeline: ImagePipeline
    private let task = Locked<Task<ImageResponse, any Error>?>(nil)

    init(pipeline: ImagePipeline, request: ImageRequest) {
        self.pipeline = pipeline
        self.request = request
        state = Locked(request.priority)
        subscriber = pipeline.imageWork.makeSubscriberID()
        let events = AsyncStream.makeStream(of: Event.self)
        let progress = AsyncStream.makeStream(of: DownloadProgress.self)
        let previews = AsyncStream.makeStream(of: Image.self)
        self.events = events.stream
        self.progress = progress.stream
        self.previews = previews.stream
        sinks = Sinks(events: events.continuation, progress: progress.continuation, previews: previews.continuation)
        // The load reads the priority as it joins the shared work, so one set between here and
        // there (docs/LIBRARY.md's `task.priority = .veryHigh` right after `imageTask(with:)`) holds.
        let started = Task { [sinks, subscriber, self] in
            try await ImageTask.run(pipeline: pipeline, request: request, subscriber: subscriber, priority: { self.priority }, sinks: sinks)
        }
        task.withLock { $0 = started }
    }

    /// The final response.
    public var response: ImageResponse {
        get async throws(ImagePipelineError) {
            guard let task = task.withLock({ $0 }) else { throw .cancelled }
            do { return try await task.value } catch { throw ImagePipeline.pipelineError(error) }
        }
    }

    /// This task's priority; the shared work follows its callers' highest.
    public var priority: RequestPriority {
        get { state.withLock { $0 } }
        set {
            state.withLock { $0 = newValue }
            pipeline.imageWork.setPriority(newValue, key: pipeline.imageJobKey(request), subscriber: subscriber)
        }
    }

    /// Stops this task (it finishes with ``ImagePipelineError/cancelled``); shared work stops
    /// when its last caller is gone.
    public func cancel() { task.withLock { $0 }?.cancel() }

    /// The continuations behind the sequences.
    struct Sinks: Sendable {
        let events: AsyncStream<Event>.Continuation
        let progress: AsyncStream<DownloadProgress>.Continuation
        let previews: AsyncStream<Image>.Continuation

        func send(_ event: StageEvent) {
            switch event {
            case .progress(let value): progress.yield(value); events.yield(.progress(value))
            case .preview(let image): previews.yield(image); events.yield(.preview(image))
            }
        }

        func finish(_ result: Result<ImageResponse, ImagePipelineError>, delivered: Bool = false) {
            if case .success(let response) = result, !delivered { events.yield(.response(response, isFinal: true)) }
            events.yield(.finished(result))
            events.finish()
            progress.finish()
            previews.finish()
        }
    }

    private static func run(
        pipeline: ImagePipeline, request: ImageRequest, subscriber: UInt64, priority: @escaping @Sendable () -> RequestPriority, sinks: Sinks
    ) async throws -> ImageResponse {
        sinks.events.yield(.started)
        var request = request
        request.priority = priority()
        do {
            let (response, delivered) = try await pipeline.respond(to: request, subscriber: subscriber, latestPriority: priority, sinks: sinks)
            sinks.finish(.success(response), delivered: delivered)
            return response
        } catch {
            sinks.finish(.failure(error))
            throw error
        }
    }
}

extension ImagePipeline {
    /// What an ``ImageTask`` does: memory, then the graph; with ``ImageLoadingOptions/refreshCached``
    /// the cached image first, then the revalidated one if it changed. `delivered` is true when
    /// the final response is the cached one already delivered.
    func respond(
        to request: ImageRequest, subscriber: UInt64, latestPriority: @escaping @Sendable () -> RequestPriority, sinks: ImageTask.Sinks
    ) async throws(ImagePipelineError) -> (response: ImageResponse, delivered: Bool) {
        if request.options.readsMemory, let reference = configuration.memoryCache?.reference(forKey: memoryImageKey(request)) {
            metrics.memoryHits.increment()
            return (ImageResponse(reference: reference, data: nil, source: .memory, request: request), false)
        }
        var cached: ImageResponse?
        if request.options.contains(.refreshCached) {
            cached = await cachedResponse(for: request)
            if let cached { sinks.events.yield(.response(cached, isFinal: false)) }
        }
        let fresh = try await load(request, subscriber: subscriber, latestPriority: latestPriority, onEvent: { sinks.send($0) })
        if let cached, fresh.isRevalidated || fresh.isStale { return (cached, true) }
        return (fresh, false)
    }

    /// The image as the caches have it now (memory, else the disk's bytes decoded), for
    /// ``ImageLoadingOptions/refreshCached``'s first delivery.
    func cachedResponse(for request: ImageRequest) async -> ImageResponse? {
        if !request.options.contains(.disableMemoryRead), let reference = configuration.memoryCache?.reference(forKey: memoryImageKey(request)) {
            return ImageResponse(reference: reference, data: nil, source: .memory, request: request)
        }
        guard !request.options.contains(.disableDiskRead) else { return nil }
        var cacheOnly = request
        cacheOnly.options.subtract([.refreshCached, .fromLoaderOnly])
        cacheOnly.options.formUnion([.fromCacheOnly, .disableMemoryWrite])
        return try? await load(cacheOnly, subscriber: imageWork.makeSubscriberID(), onEvent: nil)
    }
}
