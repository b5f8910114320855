import Foundation
public import Hummingbird
public import Logging
public import Metrics
public import Prometheus
public import WebImage

/// `webimage serve` as a library: `/img`, `/info`, `/health`, `/ready` and `/metrics` routes to mount in
/// any Hummingbird router.
///
/// ```swift
/// var configuration = ImageServerConfiguration()
/// configuration.signingKeys = [Data("secret".utf8)]
/// let server = try ImageServer(configuration: configuration)
/// let router = Router(context: ImageServerRequestContext.self)
/// router.add(middleware: AccessLogMiddleware(logger: logger))
/// server.addRoutes(to: router)                       // or to router.group("media")
/// let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
/// try await app.runService()
/// ```
public final class ImageServer: Sendable {
    public let configuration: ImageServerConfiguration
    /// Where `/metrics` reads from.
    public let registry: PrometheusCollectorRegistry
    /// The pipeline that fetches sources (guarded loader, source caches).
    public let pipeline: ImagePipeline
    let signer: URLSigner
    /// ``ImageServerConfiguration``'s rendering settings as part of every result key, made once.
    let renderingKey: String?
    let allowList: SourceAllowList
    /// The operator's presets (``ImageServerConfiguration/presets``), checked at start.
    let presets: ImagePresets
    let queue: RenderQueue
    let results: ResultCache
    let metrics: ServerMetrics
    let logger: Logger
    /// The threads renders run on, apart from the cooperative pool (see ``ImageWorkExecutor``).
    let renderExecutor: ImageWorkExecutor
    /// The memory renders may take at once (``ImageServerConfiguration/memoryBudgetBytes``).
    public let memoryBudget: MemoryBudget
    /// Result bytes responses are still sending, in ``memoryBudget``.
    let responseHolds: ResponseHolds

    /// - Parameters:
    ///   - configuration: the limits, sources, keys and caches (checked now: a bad one throws).
    ///   - registry: where the server's counters go, and what `/metrics` shows.
    ///   - metrics: a second place its counters go, such as an OpenTelemetry exporter
    ///     (`webimage serve --otlp-endpoint`); `nil`: the registry only.
    ///   - logger: where the server logs.
    public init(
        configuration: ImageServerConfiguration, registry: PrometheusCollectorRegistry = .init(), metrics: (any MetricsFactory)? = nil,
        logger: Logger = Logger(label: "webimage.server")
    ) throws {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        signer = URLSigner(keys: configuration.signingKeys)
        renderingKey = configuration.renderingKey
        renderExecutor = ImageWorkExecutor(threads: configuration.renderThreads, name: "wi-render", niceness: configuration.renderNiceness)
        memoryBudget = MemoryBudget(limit: configuration.memoryBudgetBytes)
        responseHolds = ResponseHolds(budget: memoryBudget, waitingAtMost: configuration.processingTimeout)
        allowList = try SourceAllowList(configuration.allowedSources)
        presets = try ImagePresets(
            configuration.presets, onlyPresets: configuration.onlyPresets, maxSide: configuration.maxOutputSide,
            watermark: configuration.watermark != nil, watermarkNames: Set(configuration.namedWatermarks.keys))
        queue = RenderQueue(
            maxRunning: configuration.maxConcurrentRenders, maxWaiting: configuration.maxQueuedRenders,
            maxPerClient: configuration.maxRendersPerClient)
        results = try ResultCache(memoryBytes: configuration.resultMemoryBytes, directory: configuration.resultCacheDirectory)
        let prometheus = PrometheusMetricsFactory(registry: registry)
        self.metrics = ServerMetrics(factory: metrics.map { MultiplexMetricsHandler(factories: [prometheus, $0]) } ?? prometheus)
        pipeline = try Self.makePipeline(configuration, allowList: allowList, budget: memoryBudget, executor: renderExecutor)
        // The first large AVIF, HEIF or JPEG XL render finds a worker waiting, as later ones do.
        configuration.coders.startSpareWorkers()
        if !signer.isEnabled {
            logger.warning("no signing key configured: /img accepts unsigned URLs (give --key or WEBIMAGE_KEY)")
        }
        if configuration.allowPrivateNetworks {
            logger.warning("private networks allowed: sources may be fetched from loopback and internal addresses")
        }
    }

    deinit { renderExecutor.shutdown() }

    static func defaultConnector(_ configuration: ImageServerConfiguration) throws -> PinnedHTTPConnector {
        if configuration.sourceTrustedCertificates.isEmpty { return PinnedHTTPConnector(connectTimeout: configuration.fetchTimeout) }
        return try PinnedHTTPConnector(connectTimeout: configuration.fetchTimeout, trustingPEM: configuration.sourceTrustedCertificates)
    }

    static func makePipeline(
        _ configuration: ImageServerConfiguration, allowList: SourceAllowList, budget: MemoryBudget, executor: ImageWorkExecutor
    ) throws -> ImagePipeline {
        var download = ImageDownloaderConfiguration()
        download.timeout = configuration.fetchTimeout
        download.maxBodySize = configuration.maxSourceBytes
        download.retryPolicy = .none
        download.maxConcurrentDownloads = max(6, configuration.maxConcurrentRenders)
        let connector = try configuration.connector ?? Self.defaultConnector(configuration)
        let web = GuardedDataLoader(
            resolver: configuration.resolver, allowPrivateNetworks: configuration.allowPrivateNetworks,
            connector: connector, allowList: allowList)
        let loader = SourceLoader(
            web: web, local: try configuration.localRoot.map { path throws(LocalSourceError) in try LocalSourceLoader(root: path) },
            s3: try configuration.s3.map {
                try S3SourceLoader($0, resolver: configuration.resolver, allowPrivateNetworks: configuration.allowPrivateNetworks, connector: connector)
            })
        var decoding = ImageDecodingOptions.default
        decoding.maxPixelCount = configuration.maxSourcePixels
        var pipeline = ImagePipeline.Configuration(
            downloader: ImageDownloader(loader: loader, configuration: download),
            memoryCache: nil,
            memoryDataCache: configuration.sourceMemoryBytes > 0 ? MemoryDataCache(costLimit: configuration.sourceMemoryBytes) : nil,
            dataCache: try configuration.sourceCacheDirectory.map { try DiskCache(directory: $0) },
            decodingOptions: decoding,
            // One cache for every client of the server: RFC 9111's shared cache (no `private`).
            httpCachePolicy: HTTPCachePolicy(isShared: true))
        pipeline.memoryBudget = budget
        // Sources' headers are read on the render threads: a hostile file's header can take
        // seconds to walk, and on the cooperative pool it stalled `/health` as long.
        pipeline.workExecutor = executor
        return ImagePipeline(configuration: pipeline)
    }

    /// Adds `GET img`, `info`, `health`, `ready` and `metrics` to `router` (a router or a group).
    public func addRoutes<Methods: RouterMethods>(to router: Methods) {
        for route in Self.routeNames {
            router.get(RouterPath(route)) { request, context in
                await self.respond(route: route, request, client: RequestClient(context))
            }
        }
    }

    /// Whether a new render would be admitted now (`/ready`).
    public var isReady: Bool { queue.acceptsWork }

    func metricsResponse() -> Response {
        metrics.queueDepth.record(queue.waiting)
        metrics.running.record(queue.running)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    static func text(_ body: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
