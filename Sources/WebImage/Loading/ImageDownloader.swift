public import Foundation
import Logging
import Synchronization

/// Downloads image data: a bounded, prioritised queue; coalescing with per-caller cancellation
/// and progress; validation, limits, retries, resumes, cookies, credentials and two-stage URLs.
///
/// SDWebImage's `SDWebImageDownloader` and AFNetworking's `AFImageDownloader`.
///
/// ```swift
/// let downloader = ImageDownloader()
/// let result = try await downloader.download(ImageDownloadRequest(url: url)) { progress in
///     print(progress.received, progress.expected ?? -1)
/// }
/// // Or with a token and a completion handler:
/// let token = downloader.download(ImageDownloadRequest(url: url)) { result in print(result) }
/// token.cancel()
/// ```
public final class ImageDownloader: Sendable {
    public let loader: any DataLoading
    /// Cookies received while ``ImageDownloaderConfiguration/handlesCookies`` is on.
    public let cookies = CookieJar()
    private let settings: Locked<ImageDownloaderConfiguration>
    private let queue: DownloadQueue
    private let registry: DownloadRegistry
    /// Bytes of interrupted bodies kept to resume them; the pipeline counts them in its memory
    /// budget, which drops the oldest first when it needs room.
    let resumables = ResumableDataStore()
    private let lookups = LookupCache()
    private let deadlines = DeadlineMonitor()
    private let broadcaster = EventBroadcaster<DownloadEvent>()
    private let metrics = DownloaderMetrics()
    private let ids = Locked<UInt64>(0)
    private let sharing: DownloadSharing
    private let handlesCookies: Bool
    /// Whether the global settings may add an identity (credentials, or a header other than the
    /// default `Accept` and `User-Agent`): read on every plain-URL load, so an atomic flag.
    private let globalIdentity = Atomic<Bool>(false)
    private let defaultTimeout: Duration
    /// Bumped when global headers or credentials change: downloads started before do not take
    /// callers that came after.
    private let settingsGeneration = Atomic<Int>(0)
    private let logger = Logger(label: "webimage.downloader")

    public init(loader: any DataLoading = HTTPDataLoader(), configuration: ImageDownloaderConfiguration = .init()) {
        self.loader = loader
        settings = Locked(configuration)
        queue = DownloadQueue(
            maxConcurrent: configuration.maxConcurrentDownloads,
            order: configuration.executionOrder == .fifo ? .fifo : .lifo)
        registry = DownloadRegistry(queue: queue, deadlines: deadlines)
        sharing = configuration.sharing
        defaultTimeout = configuration.timeout
        handlesCookies = configuration.handlesCookies
        globalIdentity.store(Self.mayCarryIdentity(configuration), ordering: .relaxed)
    }

    /// The settings now in force.
    public var configuration: ImageDownloaderConfiguration { settings.withLock { $0 } }

    // MARK: - Downloading

    /// Downloads `url` at `priority`, returning the whole validated body.
    public func download(
        _ url: URL, priority: RequestPriority = .normal, headers: [HTTPField] = []
    ) async throws(ImageDownloadError) -> DownloadResult {
        try await download(ImageDownloadRequest(url: url, priority: priority, headers: headers))
    }

    /// Downloads `request`. Callers of the same request (``ImageDownloaderConfiguration/sharing``:
    /// same URL, headers, credentials and validators) share one network request; each gets its
    /// own progress, result and deadline, and cancelling the calling task ends only this caller
    /// (with ``ImageDownloadError/cancelled``). A `304` answer to a request with validators is a
    /// result: ``DownloadResult/isNotModified``.
    /// - Throws: ``ImageDownloadError``.
    public func download(
        _ request: ImageDownloadRequest, progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(ImageDownloadError) -> DownloadResult {
        try await perform(request, id: nextID(), progress: progress)
    }

    /// Starts a download and returns its token at once; `completion` is called once, with the
    /// result or the error (``ImageDownloadError/cancelled`` after ``DownloadToken/cancel()``).
    @discardableResult
    public func download(
        _ request: ImageDownloadRequest, progress: (@Sendable (DownloadProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<DownloadResult, ImageDownloadError>) -> Void
    ) -> DownloadToken {
        let token = downloadToken(request, progress: progress)
        Task {
            do throws(ImageDownloadError) { completion(.success(try await token.result)) } catch { completion(.failure(error)) }
        }
        return token
    }

    /// Starts a download and returns its token: await ``DownloadToken/result``, change its
    /// priority while it waits, or cancel it.
    public func downloadToken(_ request: ImageDownloadRequest, progress: (@Sendable (DownloadProgress) -> Void)? = nil) -> DownloadToken {
        let id = nextID()
        let key = sharingKey(request, id: id)
        let task = Task { try await self.perform(request, id: id, key: key, progress: progress) }
        return DownloadToken(request: request, task: task) { [registry] priority in
            registry.setPriority(priority, key: key, id: id)
        }
    }

    /// Download events (started, response, progress, finished, failed, cancelled) from now on.
    public func events() -> AsyncStream<DownloadEvent> { broadcaster.stream() }

    // MARK: - Queue control

    public var maxConcurrentDownloads: Int { queue.maxConcurrent }
    /// Downloads holding a slot now.
    public var activeDownloads: Int { queue.running }
    /// Downloads (and look-ups) waiting for a slot.
    public var queuedDownloads: Int { queue.waitingCount }
    /// Downloads (and look-ups) waiting for a slot at `priority` now: a shared download waits at
    /// its callers' highest priority, so a joining caller moves it.
    ///
    /// ```swift
    /// let urgent = downloader.queuedDownloads(at: .veryHigh)
    /// ```
    public func queuedDownloads(at priority: RequestPriority) -> Int { queue.waitingCount(at: priority) }

    /// Changes the concurrency limit while running.
    public func setMaxConcurrentDownloads(_ value: Int) {
        settings.withLock { $0.maxConcurrentDownloads = max(1, value) }
        queue.setMaxConcurrent(value)
    }

    /// Stops starting queued downloads; running ones continue.
    public func suspend() { queue.suspend() }
    /// Starts queued downloads again.
    public func resume() { queue.resume() }
    /// Cancels every download; every caller gets ``ImageDownloadError/cancelled``.
    public func cancelAll() { registry.cancelAll() }

    // MARK: - Global settings

    /// Sets (or with `nil` removes) a header sent with every request.
    public func setHeader(_ value: String?, for name: String) {
        settings.withLock { configuration in
            configuration.headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            if let value { configuration.headers.append(HTTPField(name, value)) }
            globalIdentity.store(Self.mayCarryIdentity(configuration), ordering: .relaxed)
        }
        settingsGeneration.add(1, ordering: .relaxed)
    }

    /// Sets the credentials answered to `401` challenges.
    public func setCredentials(_ credentials: Credentials?) {
        settings.withLock { configuration in
            configuration.credentials = credentials
            globalIdentity.store(Self.mayCarryIdentity(configuration), ordering: .relaxed)
        }
        settingsGeneration.add(1, ordering: .relaxed)
    }

    // MARK: - For the pipeline: a caller identity whose priority can change while it waits

    /// A caller identity for ``download(_:subscriber:progress:)``.
    func makeSubscriberID() -> UInt64 { nextID() }

    /// Downloads `request` as caller `subscriber`, whose priority ``setPriority(_:request:subscriber:)`` changes;
    /// the body's bytes are reserved in `memory` (the pipeline's budget) before they are read.
    func download(
        _ request: ImageDownloadRequest, subscriber: UInt64, memory: (any BodyMemoryReserving)? = nil,
        progress: (@Sendable (DownloadProgress) -> Void)?
    ) async throws(ImageDownloadError) -> DownloadResult {
        try await perform(request, id: subscriber, key: sharingKey(request, id: subscriber), memory: memory, progress: progress)
    }

    /// Changes the priority of caller `subscriber` of `request`'s shared download (synchronous:
    /// the pipeline calls it under its own lock, so changes arrive in order).
    func setPriority(_ priority: RequestPriority, request: ImageDownloadRequest, subscriber: UInt64) {
        registry.setPriority(priority, key: sharingKey(request, id: subscriber), id: subscriber)
    }

    // MARK: - For the pipeline: the identity the downloader adds to a request

    /// Whether requests may leave with an identity their caller did not give: cookies from the
    /// jar, global credentials or global headers. False for a default downloader (one load).
    var mayAddIdentity: Bool { handlesCookies || globalIdentity.load(ordering: .relaxed) }

    /// What this downloader would add to a request for `url` now, or `nil` if nothing.
    func addedIdentity(for url: URL) -> RequestIdentity.Added? {
        var added = RequestIdentity.Added()
        if handlesCookies { added.cookie = cookies.cookieHeader(for: url) }
        if globalIdentity.load(ordering: .relaxed) {
            (added.headers, added.credentials) = settings.withLock { ($0.headers, $0.credentials) }
        }
        guard added.cookie != nil || !added.headers.isEmpty || added.credentials != nil else { return nil }
        return added
    }

    private static func mayCarryIdentity(_ configuration: ImageDownloaderConfiguration) -> Bool {
        configuration.credentials != nil
            || configuration.headers.contains { !["accept", "user-agent"].contains($0.name.lowercased()) }
    }

    /// The headers a download of `request` sends (the global ones, the request's own over them),
    /// validators and the request modifier's changes aside: what `Vary` is checked against.
    func sentHeaders(for request: ImageDownloadRequest) -> [HTTPField] {
        DownloadOperation.merge(settings.withLock { $0.headers }, request.headers)
    }

    // MARK: - Internals

    private func nextID() -> UInt64 { ids.withLock { $0 += 1; return $0 } }

    /// The key `request` shares under: the configured ``DownloadSharing`` key, in the current
    /// settings generation; an unshared request gets one of its own (its caller's id).
    func sharingKey(_ request: ImageDownloadRequest, id: UInt64) -> String {
        let generation = settingsGeneration.load(ordering: .relaxed)
        guard let key = sharing.key(request) else { return "\u{0}alone \(id)" }
        return generation == 0 ? key : key + "\u{0}g\(generation)"
    }

    fileprivate func perform(
        _ request: ImageDownloadRequest, id: UInt64, key: String? = nil, memory: (any BodyMemoryReserving)? = nil,
        progress: (@Sendable (DownloadProgress) -> Void)?
    ) async throws(ImageDownloadError) -> DownloadResult {
        guard loader.canLoad(request.url) else {
            throw .invalidURL(request.url.absoluteString)
        }
        let key = key ?? sharingKey(request, id: id)
        let timeout = min(request.timeout ?? defaultTimeout, .longestTimeout)
        do {
            return try await registry.subscribe(key: key, id: id, request: request, timeout: timeout, progress: progress) { ticket, handle in
                // Made only by the caller that starts the shared download, not by every joiner.
                let operation = DownloadOperation(
                    request: request, key: key, ticket: ticket, context: self.makeContext(), handle: handle, memory: memory)
                return DownloadRegistry.Work(stage: operation.firstSlotStage) { try await Self.run(operation) }
            }
        } catch {
            throw ImageDownloadError(transportError: error)
        }
    }

    private func makeContext() -> DownloadContext {
        DownloadContext(
            loader: loader, configuration: configuration, queue: queue, registry: registry, cookies: cookies,
            resumables: resumables, lookups: lookups, deadlines: deadlines, events: broadcaster, logger: logger, metrics: metrics)
    }

    private static func run(_ operation: DownloadOperation) async throws -> DownloadResult {
        let context = operation.context, url = operation.request.url
        let started = ContinuousClock.now
        context.metrics.started.increment()
        context.logger.debug("download started", metadata: ["url": "\(url)"])
        do {
            let result = try await operation.run()
            context.metrics.succeeded.increment()
            context.metrics.bytes.increment(by: result.data.count)
            context.metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            context.events.send(.finished(url, bytes: result.data.count))
            context.logger.debug("download finished", metadata: ["url": "\(url)", "bytes": "\(result.data.count)"])
            return result
        } catch {
            let failure = ImageDownloadError(transportError: error)
            context.metrics.failed(failure)
            context.events.send(failure == .cancelled ? .cancelled(url) : .failed(url, failure))
            context.logger.debug("download failed", metadata: ["url": "\(url)", "error": "\(failure)"])
            throw failure
        }
    }
}

/// A completed download: the body and the response head — or, for a request with
/// ``ImageDownloadRequest/validators``, possibly a `304` (``isNotModified``, no body).
///
/// ```swift
/// let result = try await downloader.download(ImageDownloadRequest(url: url, validators: cached.validators))
/// let bytes = result.isNotModified ? cached.data : result.data
/// ```
public struct DownloadResult: Sendable {
    public var data: Data
    public var response: DataResponse
    /// The headers (names lowercased) the request modifier changed on the way out: a `Vary` that
    /// names one of them cannot be matched by a later look-up, which does not run the modifier.
    var headersChangedByModifier: Set<String> = []
    /// The memory budget's reservations for ``data``: held while a copy of this result is.
    var memoryHolds: [any AnyObject & Sendable] = []

    public init(data: Data, response: DataResponse) {
        self.data = data
        self.response = response
    }

    /// The server answered `304 Not Modified`: the caller's cached bytes are still current.
    public var isNotModified: Bool { response.statusCode == 304 }
}

/// The body ended before (or after) the length the server declared.
public struct BodyLengthMismatch: Error, Sendable, CustomStringConvertible {
    public var declared: Int
    public var received: Int
    public var description: String { "body ended after \(received) of \(declared) declared bytes" }
}
