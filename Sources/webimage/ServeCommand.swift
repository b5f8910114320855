import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import Tracing
import WebImage
import WebImageServer

/// `webimage serve`: the image proxy (GET /img, /health, /ready, /metrics).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve resized images from other origins over HTTP (GET /img?url=…&w=…).",
        discussion: """
            GET /img?url=URL&preset=NAME&w=&h=&fit=inside|cover|fill&format=auto|jpeg|png|webp|avif|gif&q=1-100&process=SPEC&wm=OPACITY:POSITION&s=SIG \
            (and imgproxy's dpr, gravity, extend, padding, bg, trim, blur, sharpen, pixelate, max_bytes). \
            Also /health, /ready and /metrics (Prometheus). Prints "listening on http://HOST:PORT" once ready; \
            SIGTERM or SIGINT stop accepting, finish requests in flight and exit 0. Every flag has a WEBIMAGE_* \
            environment variable (docs/DEPLOY.md).
            """)

    @OptionGroup var options: ServeOptions

    func run() async throws {
        // A flag or variable that cannot be used is a usage error (exit 64), as in `fetch`.
        let resolved: (host: String, port: Int, shutdown: Duration, logLevel: String, configuration: ImageServerConfiguration, connections: ConnectionLimits)
        do { resolved = try options.resolve() } catch let error as CLIError { throw ValidationError(error.description) }
        let (host, port, shutdown, levelName, resolvedConfiguration, connections) = resolved
        var configuration = resolvedConfiguration
        guard let level = Logger.Level(rawValue: levelName) else { throw ValidationError("unknown log level \(levelName)") }
        let environment = ProcessInfo.processInfo.environment
        // With traces exported, every log line made inside a request carries its trace and span ids.
        let traceIDs = ServeTelemetry.traceIDs(endpoint: options.otlpEndpoint, environment: environment)
        LoggingSystem.bootstrap({ label, provider in
            var handler = StreamLogHandler.standardError(label: label, metadataProvider: provider)
            handler.logLevel = level
            return handler
        }, metadataProvider: traceIDs)
        let telemetry: ServeTelemetry
        do {
            telemetry = try ServeTelemetry.make(endpoint: options.otlpEndpoint, environment: environment, logger: Logger(label: "webimage.otel"))
        } catch let error as CLIError {
            throw ValidationError(error.description)
        } catch {
            throw ValidationError("OTLP export cannot start: \(error)")  // swift-otel's own: a certificate file, a TLS setting
        }
        let registry = PrometheusCollectorRegistry()
        let prometheus = PrometheusMetricsFactory(registry: registry)
        MetricsSystem.bootstrap(telemetry.metrics.map { MultiplexMetricsHandler(factories: [prometheus, $0]) } ?? prometheus)
        if let tracer = telemetry.tracer { InstrumentationSystem.bootstrap(tracer) }
        try await Self.downloadWatermarks(options.watermarkURLs(environment), into: &configuration)
        if let s3 = configuration.s3 { configuration.s3?.startingCredentials = try await Self.checkS3Credentials(s3.credentials) }
        let logger = Logger(label: "webimage.serve")
        let server = try ImageServer(configuration: configuration, registry: registry, metrics: telemetry.metrics, logger: logger)
        let router = Router(context: ImageServerRequestContext.self)
        if telemetry.tracer != nil { router.add(middleware: TracingMiddleware()) }  // one server span per request, parent of the rest
        router.add(middleware: AccessLogMiddleware(logger: Logger(label: "webimage.access")))
        server.addRoutes(to: router)
        let factory = PrometheusMetricsFactory(registry: registry)
        let app = Application(
            router: router,
            server: connections.serverBuilder(),  // head, idle and request timeouts; header limits
            configuration: .init(address: .hostname(host, port: port), serverName: "webimage"),
            onServerRunning: { channel in
                // The connection caps, before the banner: a test or probe that waits for it sees them on.
                do { try await connections.guardAccepts(on: channel, factory: factory) } catch {
                    logger.critical("cannot guard connections: \(error)")
                    Foundation.exit(70)  // never serve without the caps
                }
                let bound = channel.localAddress?.port ?? port
                FileHandle.standardOutput.write(Data("listening on http://\(host):\(bound)\n".utf8))
            },
            logger: logger)
        var groupConfiguration = ServiceGroupConfiguration(
            // Shut down in reverse order: the server drains first, then the exporters flush what it recorded.
            services: telemetry.services + [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = shutdown
        try await ServiceGroup(configuration: groupConfiguration).run()
        logger.info("stopped")
    }
}

extension ServeCommand {
    /// Fetches the platform's S3 credentials once (a container or instance role), so that a server
    /// that cannot get them stops before it listens (exit 69, a service it needs is unavailable).
    /// Returns them, to be used until they near their expiry (`nil` for fixed keys).
    static func checkS3Credentials(_ source: S3CredentialSource) async throws -> S3Credentials? {
        if case .keys = source { return nil }
        do throws(S3SourceError) { return try await source.fetch() } catch {
            FileHandle.standardError.write(Data("error: --use-s3: \(error.description)\n".utf8))
            throw ExitCode(69)
        }
    }

    /// Downloads the watermarks given as URLs (`--watermark NAME=https://…`), once, before the
    /// server listens: each at most ``ServerWatermark/maxBytes``, within 30 s. One that cannot
    /// be downloaded stops the server (exit 69, the service it needs is unavailable); one that
    /// cannot be used, as a bad file does (exit 64).
    static func downloadWatermarks(_ pending: [(name: String?, url: URL, entry: String)], into c: inout ImageServerConfiguration) async throws {
        guard !pending.isEmpty else { return }
        var settings = ImageDownloaderConfiguration()
        settings.maxBodySize = ServerWatermark.maxBytes
        settings.timeout = .seconds(30)
        let loader = HTTPDataLoader()
        let downloader = ImageDownloader(loader: loader, configuration: settings)
        var downloaded: [Data] = []
        for (_, url, entry) in pending {
            do { downloaded.append(try await downloader.download(url).data) } catch {
                try? await loader.shutdown()
                FileHandle.standardError.write(Data("error: --watermark \(entry): cannot download it: \(error)\n".utf8))
                throw ExitCode(69)
            }
        }
        try? await loader.shutdown()
        for ((name, _, entry), data) in zip(pending, downloaded) {
            let mark: ServerWatermark
            do throws(ServerWatermark.InvalidWatermark) { mark = try ServerWatermark(data: data) } catch {
                throw ValidationError("--watermark \(entry): \(error.description)")
            }
            if let name { c.namedWatermarks[name] = mark } else { c.watermark = mark }
        }
    }
}
