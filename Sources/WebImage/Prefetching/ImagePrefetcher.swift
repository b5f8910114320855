public import Foundation
import Logging
import Metrics

/// Loads images before they are needed, a few at a time and at low priority, so that they
/// show at once later — SDWebImage's `SDWebImagePrefetcher` and Nuke's `ImagePrefetcher`.
///
/// At most `maxConcurrent` prefetches load at once (3 by default); the others wait here, not in
/// the downloader, so displayed images never queue behind them. Prefetches go through the
/// pipeline's shared work: a display load of an image being prefetched joins the prefetch (one
/// request) and lifts it to the display's priority. Starting an image already being prefetched
/// does nothing; an image already in the memory cache counts as finished at once.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline)             // memory cache, 3 at once, .low
/// prefetcher.onAllDone = { counts in print("\(counts.finished) ready, \(counts.skipped) failed") }
/// prefetcher.startPrefetching(upcomingURLs)
/// prefetcher.stopPrefetching(urlsScrolledAway)
/// ```
///
/// A class guarded by a `Locked` (a mutex), not an actor: start and stop are called from synchronous code
/// (scroll callbacks) and must take effect in the order they were called — a stop made right
/// after a start must find it, which two separate hops onto an actor would not promise — and
/// they cost a few dictionary operations, no hop. Callbacks and events are handed, under the
/// lock, to one delivery task, so they arrive in order and never run under the lock.
public final class ImagePrefetcher: Sendable {
    public let pipeline: ImagePipeline
    public let destination: Destination
    /// How many prefetches load at once.
    public var maxConcurrent: Int { state.withLock { $0.queue.maxConcurrent } }

    private struct State {
        var queue: PrefetchQueue
        var priority: RequestPriority = .low
    }

    private let state: Locked<State>
    private let observers = PrefetchObservers()
    private let delivery: AsyncStream<Event>.Continuation
    private let logger = Logger(label: "webimage.prefetcher")

    /// - Parameters:
    ///   - pipeline: the pipeline that loads and caches (its priorities and sharing apply).
    ///   - destination: ``Destination/memoryCache`` (decoded, default) or ``Destination/diskCache`` (bytes only).
    ///   - maxConcurrent: prefetches loading at once; values below 1 mean 1.
    public init(pipeline: ImagePipeline = .shared, destination: Destination = .memoryCache, maxConcurrent: Int = 3) {
        self.pipeline = pipeline
        self.destination = destination
        state = Locked(State(queue: PrefetchQueue(maxConcurrent: maxConcurrent)))
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        delivery = continuation
        Task { [observers] in
            for await event in stream { observers.deliver(event) }
            observers.finish()
        }
    }

    deinit {
        let stopped = state.withLock { state in state.queue.activeKeys.compactMap { state.queue.stop($0)?.handle } }
        for handle in stopped { handle.cancel() }
        delivery.finish()
    }

    // MARK: - Settings and observation

    /// The priority prefetches load at (``RequestPriority/low`` by default), replacing each
    /// request's own. A change applies to waiting prefetches and to loading ones of the memory
    /// destination; loading disk prefetches keep the priority they started with.
    ///
    /// ```swift
    /// prefetcher.priority = .veryLow   // the user is scrolling fast
    /// ```
    public var priority: RequestPriority {
        get { state.withLock { $0.priority } }
        set {
            let loading = state.withLock { state in
                state.priority = newValue
                return state.queue.loadingImageTasks
            }
            for task in loading { task.priority = newValue }
        }
    }

    /// The counts of the current batch (or of the last one, until the next begins).
    public var counts: Counts { state.withLock { $0.queue.counts } }

    /// Called once per accepted request when it ends, in order, off the caller's task.
    ///
    /// ```swift
    /// prefetcher.onFinished = { url, result in if case .failure = result { log(url) } }
    /// ```
    public var onFinished: (@Sendable (URL, Result<ImageSource, ImagePipelineError>) -> Void)? {
        get { observers.callbacks.withLock { $0.finished } }
        set { observers.callbacks.withLock { $0.finished = newValue } }
    }

    /// Called when a batch ends — also after ``stopAll()`` once the stopped loads have ended.
    public var onAllDone: (@Sendable (Counts) -> Void)? {
        get { observers.callbacks.withLock { $0.allDone } }
        set { observers.callbacks.withLock { $0.allDone = newValue } }
    }

    /// A new sequence of every event from now on; it ends when the prefetcher is released.
    /// Keeps the newest 1,024 events for a slow reader.
    ///
    /// ```swift
    /// for await case .finished(let url, .success(let source)) in prefetcher.events() { print(url, source) }
    /// ```
    public func events() -> AsyncStream<Event> { observers.broadcaster.stream() }

    // MARK: - Starting and stopping

    /// Prefetches the images at `urls`. See ``startPrefetching(_:)-([ImageRequest])``.
    public func startPrefetching(_ urls: [URL]) { startPrefetching(urls.map { ImageRequest(url: $0) }) }

    /// Prefetches `requests` in order, at most ``maxConcurrent`` at once. A request already
    /// being prefetched (same cache key) is ignored; one already in the memory cache (memory
    /// destination) is counted finished at once.
    ///
    /// ```swift
    /// prefetcher.startPrefetching(rows.map { ImageRequest(url: $0.imageURL).thumbnail(maxPixelSize: 256) })
    /// ```
    public func startPrefetching(_ requests: [ImageRequest]) {
        let cached = requests.map { destination == .memoryCache && $0.options.readsMemory && pipeline.cachedImage(for: $0) != nil }
        var accepted = 0
        state.withLock { state in
            for (request, isCached) in zip(requests, cached) {
                let key = key(for: request)
                guard !state.queue.isActive(key) else { continue }
                accepted += 1
                if isCached {
                    state.queue.finishAtOnce()
                    PrefetchMetrics.record(.success(.memory))
                    delivery.yield(.finished(request.url, .success(.memory)))
                } else {
                    _ = state.queue.enqueue(request, key: key)
                }
            }
            admit(&state)
        }
        logger.debug("prefetch started", metadata: ["requested": "\(requests.count)", "accepted": "\(accepted)"])
    }

    /// Stops prefetching `urls`. See ``stopPrefetching(_:)-([ImageRequest])``.
    public func stopPrefetching(_ urls: [URL]) { stopPrefetching(urls.map { ImageRequest(url: $0) }) }

    /// Stops these prefetches (pass the requests they were started with: they are found by
    /// cache key). Each ends as cancelled; a display load that joined one keeps loading.
    public func stopPrefetching(_ requests: [ImageRequest]) {
        stop(requests.map(key(for:)))
    }

    /// Stops every prefetch. The batch's all-done follows once the stopped loads have ended.
    ///
    /// ```swift
    /// prefetcher.stopAll()   // the screen went away
    /// ```
    public func stopAll() {
        stop(state.withLock { $0.queue.activeKeys })
    }

    // MARK: - Internals

    private func key(for request: ImageRequest) -> String {
        let request = pipeline.identified(request)
        return destination == .memoryCache ? request.imageKey : request.dataKey
    }

    private func stop(_ keys: [String]) {
        let handles = state.withLock { state -> [PrefetchHandle] in
            var handles: [PrefetchHandle] = []
            for key in keys {
                guard let entry = state.queue.stop(key) else { continue }
                if let handle = entry.handle { handles.append(handle) }
                PrefetchMetrics.record(.failure(.cancelled))
                delivery.yield(.finished(entry.request.url, .failure(.cancelled)))
            }
            admit(&state)
            return handles
        }
        for handle in handles { handle.cancel() }
        if !keys.isEmpty { logger.debug("prefetch stopped", metadata: ["keys": "\(keys.count)"]) }
    }

    /// Starts waiting requests while slots are free, then reports a batch that has ended.
    /// Runs under the lock: the task is stored before its completion can be handled.
    private func admit(_ state: inout State) {
        while let next = state.queue.admitNext() {
            let handle = load(next.entry.request.priority(state.priority), key: next.key, id: next.entry.id)
            state.queue.setHandle(handle, key: next.key, id: next.entry.id)
        }
        if let counts = state.queue.takeAllDone() {
            delivery.yield(.allDone(counts))
            logger.debug("prefetch batch done", metadata: ["finished": "\(counts.finished)", "skipped": "\(counts.skipped)", "total": "\(counts.total)"])
        }
    }

    private func load(_ request: ImageRequest, key: String, id: UInt64) -> PrefetchHandle {
        switch destination {
        case .memoryCache:
            let imageTask = pipeline.imageTask(with: request)
            let task = Task { [weak self] in
                let result: Result<ImageSource, ImagePipelineError>
                do throws(ImagePipelineError) { result = .success(try await imageTask.response.source) } catch { result = .failure(error) }
                self?.complete(key: key, id: id, result: result)
            }
            return PrefetchHandle(task: task, imageTask: imageTask)
        case .diskCache:
            let task = Task { [weak self, pipeline] in
                let result: Result<ImageSource, ImagePipelineError>
                do throws(ImagePipelineError) { result = .success(try await pipeline.data(for: request).source) } catch { result = .failure(error) }
                self?.complete(key: key, id: id, result: result)
            }
            return PrefetchHandle(task: task, imageTask: nil)
        }
    }

    private func complete(key: String, id: UInt64, result: Result<ImageSource, ImagePipelineError>) {
        state.withLock { state in
            if let request = state.queue.complete(key: key, id: id, result: result) {
                PrefetchMetrics.record(result)
                delivery.yield(.finished(request.url, result))
            }
            admit(&state)
        }
    }
}
