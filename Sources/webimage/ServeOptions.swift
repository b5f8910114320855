import ArgumentParser
import Foundation
import WebImage
import WebImageServer

/// `webimage serve`'s flags. Each has a `WEBIMAGE_*` environment variable, used when the flag
/// is absent (repeatable flags: comma-separated); the table is in docs/DEPLOY.md.
struct ServeOptions: ParsableArguments {
    @Option(help: "Address to listen on (WEBIMAGE_HOST; default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on, 0 for any (WEBIMAGE_PORT; default 8080).") var port: Int?
    @Option(name: .customLong("key"), help: "HMAC-SHA256 signing key; repeat to rotate (WEBIMAGE_KEY, comma-separated). None: signatures off.")
    var keys: [String] = []
    @Option(name: .customLong("allow-source"), help: "Only fetch sources (and follow redirects) under scheme://host[:port][/path], compared part by part; *.example.com allows subdomains; repeatable (WEBIMAGE_ALLOW_SOURCE).")
    var allowSources: [String] = []
    @Flag(help: "Also fetch from loopback, private and other internal addresses (WEBIMAGE_ALLOW_PRIVATE_NETWORKS=1).")
    var allowPrivateNetworks = false
    @Option(name: .customLong("source-ca-file"), help: "PEM certificates trusted for https sources besides the system's (a private CA); repeatable (WEBIMAGE_SOURCE_CA_FILE).")
    var sourceCAFiles: [String] = []
    @Option(help: "Largest source body in bytes (WEBIMAGE_MAX_SOURCE_BYTES; default 52428800).") var maxSourceBytes: Int?
    @Option(help: "Largest source in pixels over all frames (WEBIMAGE_MAX_SOURCE_PIXELS; default 50000000).") var maxSourcePixels: Int?
    @Option(help: "Seconds allowed to fetch a source (WEBIMAGE_FETCH_TIMEOUT; default 5).") var fetchTimeout: Double?
    @Option(help: "Seconds allowed to decode, process and encode (WEBIMAGE_PROCESSING_TIMEOUT; default 10).") var processingTimeout: Double?
    @Option(help: "Largest side of a result in pixels (WEBIMAGE_MAX_OUTPUT_SIDE; default 8192).") var maxOutputSide: Int?
    @Option(help: "Most pixels a result may have, all frames counted (WEBIMAGE_MAX_OUTPUT_PIXELS; default 50000000).") var maxOutputPixels: Int?
    @Option(help: "Frames of an animation kept; later ones are dropped (WEBIMAGE_MAX_ANIMATION_FRAMES; default 256).") var maxAnimationFrames: Int?
    @Option(help: "Most steps in process= (WEBIMAGE_MAX_PROCESS_STEPS; default 16).") var maxProcessSteps: Int?
    @Option(help: "Memory renders may hold at once, in MB (WEBIMAGE_MEMORY_BUDGET_MB; default: half the cgroup limit or of physical memory, at most 1024).") var memoryBudgetMb: Int?
    @Option(help: "Requests fetched and rendered at once (WEBIMAGE_CONCURRENCY; default: twice the number of cores).") var concurrency: Int?
    @Option(help: "Requests waiting for a render before 429 (WEBIMAGE_QUEUE; default 64).") var queue: Int?
    @Option(help: "Threads that decode, process and encode, apart from the server's own (WEBIMAGE_RENDER_THREADS; default: the number of cores).") var renderThreads: Int?
    @Option(help: "Nice value added to the render threads, 0-19, so the server's own threads win the cores when renders fill them (WEBIMAGE_RENDER_NICENESS; default 5).") var renderNiceness: Int?
    @Option(help: "Renders one client (its address; behind a local proxy, the last X-Forwarded-For entry) may have running or waiting (WEBIMAGE_PER_CLIENT; default: no limit).")
    var perClient: Int?
    @Option(help: "Cache-Control max-age of images in seconds (WEBIMAGE_MAX_AGE; default 31536000).") var maxAge: Int?
    @Option(help: "Cache-Control max-age of errors in seconds (WEBIMAGE_ERROR_MAX_AGE; default 10).") var errorMaxAge: Int?
    @Option(help: "Memory for rendered images in MB, 0 = off (WEBIMAGE_RESULT_MEMORY_MB; default 64).") var resultMemoryMb: Int?
    @Option(help: "Memory for source images in MB, 0 = off (WEBIMAGE_SOURCE_MEMORY_MB; default 64).") var sourceMemoryMb: Int?
    @Option(help: "Disk caches: DIR/results and DIR/sources (WEBIMAGE_CACHE_DIR; default: none).") var cacheDir: String?
    @Option(help: "Lossy quality when q is not given, 1-100 (WEBIMAGE_QUALITY; default 80).") var quality: Int?
    @Option(help: "Colour profiles: srgb converts to sRGB and strips the profile, keep leaves pixels and embeds it, ignore leaves pixels and drops it (WEBIMAGE_COLOR; default srgb).")
    var color: String?
    @Option(help: "Decode AVIF, HEIF and JPEG XL images of 2 megapixels or more, and encode AVIF, HEIF and lossless WebP results of 100,000 pixels or more, in a worker process that a passed deadline kills: on or off (WEBIMAGE_ISOLATE_DECODES; default on).")
    var isolateDecodes: String?
    @Option(help: "Seconds a client has to send a request head, from connecting or from its first byte (WEBIMAGE_HEAD_TIMEOUT; default 10).")
    var headTimeout: Double?
    @Option(help: "Seconds a kept-alive connection may wait for its next request (WEBIMAGE_IDLE_TIMEOUT; default 75).") var idleTimeout: Double?
    @Option(help: "Seconds from a request's head to the end of its response (WEBIMAGE_REQUEST_TIMEOUT; default: fetch timeout + twice the processing timeout + 30).")
    var requestTimeout: Double?
    @Option(help: "Client connections open at once; more are closed at accept (WEBIMAGE_MAX_CONNECTIONS; default: 10000, or fewer to keep descriptors free).")
    var maxConnections: Int?
    @Option(help: "Connections one client address may have open (WEBIMAGE_MAX_CONNECTIONS_PER_CLIENT; default 256).") var maxConnectionsPerClient: Int?
    @Option(help: "Bytes of a request line and its headers, 431 beyond (WEBIMAGE_MAX_HEADER_BYTES; default 32768).") var maxHeaderBytes: Int?
    @Option(help: "Header fields in a request, 431 beyond (WEBIMAGE_MAX_HEADERS; default 100).") var maxHeaders: Int?
    @Option(help: "KB of kernel send buffer a connection may hold, 0 for the kernel's autotuning (WEBIMAGE_SEND_BUFFER_KB; default 256).")
    var sendBufferKB: Int?
    @Option(help: "Seconds in-flight requests may take after SIGTERM (WEBIMAGE_SHUTDOWN_TIMEOUT; default 30).") var shutdownTimeout: Double?
    @Option(help: "trace, debug, info, notice, warning, error or critical (WEBIMAGE_LOG_LEVEL; default info).") var logLevel: String?
    @Option(help: "http(s)://HOST:PORT of an OpenTelemetry collector: traces and metrics go there over OTLP/HTTP, beside /metrics; the standard OTEL_* variables apply (WEBIMAGE_OTLP_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT; default: no export).")
    var otlpEndpoint: String?
    @Option(name: .customLong("preset"), help: "A named parameter set NAME=PARAM:VALUE/PARAM:VALUE (thumb=w:200/h:200/fit:cover), used by /img?preset=NAME; 'default' applies to every request; repeatable (WEBIMAGE_PRESETS, comma-separated).")
    var presets: [String] = []
    @Option(help: "A file of presets, one NAME=PARAM:VALUE/… a line, # comments (WEBIMAGE_PRESETS_FILE).") var presetsFile: String?
    @Flag(name: [.customLong("only-presets"), .customLong("presets-only")], help: "Refuse any /img parameter but url, preset and s (WEBIMAGE_ONLY_PRESETS=1).")
    var onlyPresets = false
    @Option(help: "PATH or http(s) URL (downloaded once at start): the image blended over results that ask for it with wm=; NAME=PATH or NAME=URL (repeatable): one that wm=NAME:... picks (WEBIMAGE_WATERMARK, comma-separated; each at most 4 MB and 4096 x 4096).") var watermark: [String] = []
    @Option(help: "Serve local:///PATH sources: regular files under DIR, no symbolic links followed (WEBIMAGE_LOCAL_ROOT; default: local:// refused).")
    var localRoot: String?
    @Flag(help: "Serve s3://BUCKET/KEY sources, signed with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (WEBIMAGE_USE_S3=1).")
    var useS3 = false
    @Option(help: "S3 signing region (WEBIMAGE_S3_REGION, else AWS_REGION, else AWS_DEFAULT_REGION; default us-east-1).") var s3Region: String?
    @Option(help: "http(s)://host[:port] of an S3-compatible service (MinIO, R2), addressed path-style; exempt from the private-network rule (WEBIMAGE_S3_ENDPOINT; default: AWS).")
    var s3Endpoint: String?

    /// The flag, else the environment variable, else `nil`.
    static func value<T: LosslessStringConvertible>(_ flag: T?, _ variable: String, _ environment: [String: String]) throws -> T? {
        if let flag { return flag }
        guard let text = environment[variable], !text.isEmpty else { return nil }
        guard let value = T(text) else { throw CLIError("\(variable)=\(text) is not a valid value") }
        return value
    }

    static func list(_ flags: [String], _ variable: String, _ environment: [String: String]) -> [String] {
        if !flags.isEmpty { return flags }
        return (environment[variable] ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
    }

    /// The PEM file at `path`, checked to hold at least one certificate.
    static func certificates(_ path: String) throws -> Data {
        guard let pem = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read the certificate file \(path)") }
        guard (try? PinnedHTTPConnector(trustingPEM: [pem])) != nil else {
            throw CLIError("\(path) holds no valid PEM certificate")
        }
        return pem
    }

    /// `value` seconds; a negative, non-finite or absurd value (over a year) is refused, never trapped on.
    static func seconds(_ value: Double) throws -> Duration {
        guard value.isFinite, value >= 0, value <= 31_536_000 else { throw CLIError("\(value) is not a number of seconds from 0 to 31536000") }
        return .milliseconds(Int((value * 1000).rounded()))
    }

    /// The listening address and the server configuration.
    func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> (host: String, port: Int, shutdown: Duration, logLevel: String, configuration: ImageServerConfiguration, connections: ConnectionLimits)
    {
        let env = environment
        var c = ImageServerConfiguration()
        c.signingKeys = Self.list(keys, "WEBIMAGE_KEY", env).map { Data($0.utf8) }
        c.allowedSources = Self.list(allowSources, "WEBIMAGE_ALLOW_SOURCE", env)
        do throws(SourceAllowList.InvalidEntry) { _ = try SourceAllowList(c.allowedSources) } catch { throw CLIError(error.description) }
        c.allowPrivateNetworks = allowPrivateNetworks || ["1", "true", "yes"].contains(env["WEBIMAGE_ALLOW_PRIVATE_NETWORKS"]?.lowercased() ?? "")
        c.sourceTrustedCertificates = try Self.list(sourceCAFiles, "WEBIMAGE_SOURCE_CA_FILE", env).map(Self.certificates)
        if let v = try Self.value(maxSourceBytes, "WEBIMAGE_MAX_SOURCE_BYTES", env) { c.maxSourceBytes = v }
        if let v = try Self.value(maxSourcePixels, "WEBIMAGE_MAX_SOURCE_PIXELS", env) { c.maxSourcePixels = v }
        if let v = try Self.value(fetchTimeout, "WEBIMAGE_FETCH_TIMEOUT", env) { c.fetchTimeout = try Self.seconds(v) }
        if let v = try Self.value(processingTimeout, "WEBIMAGE_PROCESSING_TIMEOUT", env) { c.processingTimeout = try Self.seconds(v) }
        if let v = try Self.value(maxOutputSide, "WEBIMAGE_MAX_OUTPUT_SIDE", env) { c.maxOutputSide = v }
        if let v = try Self.value(maxOutputPixels, "WEBIMAGE_MAX_OUTPUT_PIXELS", env) {
            guard v >= 1 else { throw CLIError("the output pixel limit must be at least 1") }
            c.maxOutputPixels = v
        }
        if let v = try Self.value(maxAnimationFrames, "WEBIMAGE_MAX_ANIMATION_FRAMES", env) {
            guard v >= 1 else { throw CLIError("the animation frame limit must be at least 1") }
            c.maxAnimationFrames = v
        }
        if let v = try Self.value(memoryBudgetMb, "WEBIMAGE_MEMORY_BUDGET_MB", env) {
            guard (1...(1 << 30)).contains(v) else { throw CLIError("the memory budget must be from 1 MB") }
            c.memoryBudgetBytes = v << 20
        }
        if let v = try Self.value(maxProcessSteps, "WEBIMAGE_MAX_PROCESS_STEPS", env) {
            guard v >= 0 else { throw CLIError("the process step limit must be 0 or more") }
            c.maxProcessSteps = v
        }
        if let v = try Self.value(concurrency, "WEBIMAGE_CONCURRENCY", env) { c.maxConcurrentRenders = v }
        if let v = try Self.value(queue, "WEBIMAGE_QUEUE", env) { c.maxQueuedRenders = v }
        if let v = try Self.value(renderThreads, "WEBIMAGE_RENDER_THREADS", env) {
            guard (1...1024).contains(v) else { throw CLIError("the render threads must be from 1 to 1024") }
            c.renderThreads = v
        }
        if let v = try Self.value(renderNiceness, "WEBIMAGE_RENDER_NICENESS", env) {
            guard (0...19).contains(v) else { throw CLIError("the render niceness must be from 0 to 19") }
            c.renderNiceness = Int32(v)
        }
        c.maxRendersPerClient = try Self.value(perClient, "WEBIMAGE_PER_CLIENT", env)
        if let v = try Self.value(maxAge, "WEBIMAGE_MAX_AGE", env) { c.cacheMaxAge = v }
        if let v = try Self.value(errorMaxAge, "WEBIMAGE_ERROR_MAX_AGE", env) { c.errorMaxAge = v }
        if let v = try Self.value(resultMemoryMb, "WEBIMAGE_RESULT_MEMORY_MB", env) { c.resultMemoryBytes = v << 20 }
        if let v = try Self.value(sourceMemoryMb, "WEBIMAGE_SOURCE_MEMORY_MB", env) { c.sourceMemoryBytes = v << 20 }
        if let dir = try Self.value(cacheDir, "WEBIMAGE_CACHE_DIR", env) {
            let base = URL(fileURLWithPath: dir, isDirectory: true)
            c.resultCacheDirectory = base.appendingPathComponent("results", isDirectory: true)
            c.sourceCacheDirectory = base.appendingPathComponent("sources", isDirectory: true)
        }
        if let v = try Self.value(color, "WEBIMAGE_COLOR", env) {
            guard let handling = ColorHandling(rawValue: v) else { throw CLIError("--color must be srgb, keep or ignore") }
            c.colorHandling = handling
        }
        if let v = try Self.value(quality, "WEBIMAGE_QUALITY", env) {
            guard (1...100).contains(v) else { throw CLIError("the quality must be from 1 to 100") }
            c.defaultQuality = v
        }
        switch try Self.value(isolateDecodes, "WEBIMAGE_ISOLATE_DECODES", env) ?? "on" {
        case "on": c.coders = ImageCoderRegistry.default.isolatingDecodes(DecodeIsolation(worker: .currentExecutable(arguments: [DecodeWorkerCommand.name])))
        case "off": c.coders = .default
        case let other: throw CLIError("--isolate-decodes must be on or off, not \(other)")
        }
        try presetsAndWatermark(env, into: &c)
        try sources(env, into: &c)
        let port = try Self.value(port, "WEBIMAGE_PORT", env) ?? 8080
        guard (0...65535).contains(port) else { throw CLIError("the port must be from 0 to 65535") }
        return (
            try Self.value(host, "WEBIMAGE_HOST", env) ?? "127.0.0.1", port,
            try Self.seconds(try Self.value(shutdownTimeout, "WEBIMAGE_SHUTDOWN_TIMEOUT", env) ?? 30),
            try Self.value(logLevel, "WEBIMAGE_LOG_LEVEL", env) ?? "info", c, try connectionLimits(env, server: c))
    }
}
