import Foundation
import Logging
import Metrics
#if WEBIMAGE_OTLP
import OTel
#endif
import ServiceLifecycle
import Tracing

/// `serve --otlp-endpoint`: traces and metrics sent to an OpenTelemetry collector over OTLP/HTTP
/// (protobuf by default), beside `/metrics`, which stays.
///
/// A signal is exported when `--otlp-endpoint` (`WEBIMAGE_OTLP_ENDPOINT`) is given, or the standard
/// `OTEL_EXPORTER_OTLP_ENDPOINT` or that signal's own endpoint variable is set; never by default, so a
/// server does not send to `localhost:4318` unasked. The flag and a standard endpoint together are
/// refused (swift-otel would let the variable win). The other standard `OTEL_*` variables apply as the
/// OpenTelemetry specification says (service name, resource attributes, headers, sampler, batch and
/// export intervals). Values this build cannot honour — OTLP over gRPC, samplers and propagators
/// swift-otel does not implement — are usage errors at start, not a crash later.
struct ServeTelemetry {
    /// The metrics factory to add beside Prometheus, when metrics are exported.
    var metrics: (any MetricsFactory)?
    /// The tracer to install, when traces are exported.
    var tracer: (any Tracer)?
    /// The exporters' background work, run in the server's service group (it flushes on shutdown).
    var services: [any Service] = []

    static let none = ServeTelemetry()

    static let sharedEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
    static let standardEndpoints = [sharedEndpoint, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]

    /// The flag, else `WEBIMAGE_OTLP_ENDPOINT`.
    static func endpoint(_ flag: String?, _ env: [String: String]) -> String? {
        flag ?? env["WEBIMAGE_OTLP_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func isSet(_ name: String, _ env: [String: String]) -> Bool { !(env[name] ?? "").isEmpty }

    /// Whether `signal` (`TRACES`, `METRICS`) is exported: an endpoint for it given, its exporter
    /// not `none`, and the SDK not disabled.
    static func exports(_ signal: String, endpoint flag: String?, environment env: [String: String]) -> Bool {
        guard env["OTEL_SDK_DISABLED"]?.lowercased() != "true", env["OTEL_\(signal)_EXPORTER"]?.lowercased() != "none" else { return false }
        return endpoint(flag, env) != nil || isSet(sharedEndpoint, env) || isSet("OTEL_EXPORTER_OTLP_\(signal)_ENDPOINT", env)
    }

    /// Whether anything is exported.
    static func isRequested(endpoint flag: String?, environment env: [String: String]) -> Bool {
        exports("TRACES", endpoint: flag, environment: env) || exports("METRICS", endpoint: flag, environment: env)
    }

    /// The exporters `endpoint` (the flag or its variable) and the `OTEL_*` variables ask for.
    static func make(endpoint flag: String?, environment env: [String: String], logger: Logger) throws -> ServeTelemetry {
        guard isRequested(endpoint: flag, environment: env) else { return .none }
        #if WEBIMAGE_OTLP
        let endpoint = endpoint(flag, env)
        try checkSupported(env)
        var configuration = OTel.Configuration.default
        configuration.serviceName = "webimage"
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning  // not a line per variable read at start (OTEL_LOG_LEVEL changes it)
        configuration.logs.enabled = false  // logs stay on standard error, with trace ids in their metadata
        // 5 s a batch (not 30): the flush at SIGTERM shares --shutdown-timeout with the drain.
        configuration.traces.batchSpanProcessor.exportTimeout = .seconds(5)
        configuration.traces.otlpExporter.timeout = .seconds(5)
        configuration.metrics.exportTimeout = .seconds(5)
        configuration.metrics.otlpExporter.timeout = .seconds(5)
        if let endpoint {
            let name = flag != nil ? "--otlp-endpoint" : "WEBIMAGE_OTLP_ENDPOINT"
            try checkEndpoint(endpoint, name: name)
            // swift-otel reads the standard variables after this configuration and would let them
            // win; a flag and a standard endpoint together are ambiguous, so they are refused.
            if let other = standardEndpoints.first(where: { isSet($0, env) }) {
                throw CLIError("\(name) and \(other) are both set: give one")
            }
            configuration.traces.otlpExporter.endpoint = signalURL(endpoint, "traces")
            configuration.metrics.otlpExporter.endpoint = signalURL(endpoint, "metrics")
        }
        var telemetry = ServeTelemetry()
        if exports("TRACES", endpoint: flag, environment: env) {
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            telemetry.tracer = backend.factory
            telemetry.services.append(backend.service)
        }
        if exports("METRICS", endpoint: flag, environment: env) {
            let backend = try OTel.makeMetricsBackend(configuration: configuration)
            telemetry.metrics = backend.factory
            telemetry.services.append(backend.service)
        }
        return telemetry
        #else
        throw CLIError("this webimage was built without OTLP export (the Thread Sanitizer build leaves swift-otel out)")
        #endif
    }

    /// The logging metadata provider that adds trace and span ids, when traces are exported.
    static func traceIDs(endpoint flag: String?, environment env: [String: String]) -> Logger.MetadataProvider? {
        #if WEBIMAGE_OTLP
        return exports("TRACES", endpoint: flag, environment: env) ? OTel.makeLoggingMetadataProvider() : nil
        #else
        return nil
        #endif
    }

    /// The base URL's path for one signal, as the specification derives it from
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (`http://collector:4318` → `http://collector:4318/v1/traces`).
    static func signalURL(_ base: String, _ signal: String) -> String {
        base.hasSuffix("/") ? "\(base)v1/\(signal)" : "\(base)/v1/\(signal)"
    }

    static func checkEndpoint(_ text: String, name: String) throws {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.query == nil
        else { throw CLIError("\(name) \(text) is not an http(s)://host[:port][/path] URL of an OTLP/HTTP receiver") }
    }

    /// Refuses the standard variables' values that swift-otel answers by stopping the process.
    static func checkSupported(_ env: [String: String]) throws {
        for name in ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"] {
            guard let value = env[name], !value.isEmpty else { continue }
            guard ["http/protobuf", "http/json"].contains(value.lowercased()) else {
                throw CLIError("\(name)=\(value): webimage exports OTLP over HTTP only (http/protobuf or http/json)")
            }
        }
        for (name, allowed) in [("OTEL_TRACES_EXPORTER", ["otlp", "none"]), ("OTEL_METRICS_EXPORTER", ["otlp", "none"])] {
            guard let value = env[name], !value.isEmpty, !allowed.contains(value.lowercased()) else { continue }
            throw CLIError("\(name)=\(value): webimage serve exports otlp or none (/metrics is the Prometheus endpoint)")
        }
        if let value = env["OTEL_TRACES_SAMPLER"], ["jaeger_remote", "parentbased_jaeger_remote", "xray"].contains(value.lowercased()) {
            throw CLIError("OTEL_TRACES_SAMPLER=\(value) is not supported; use always_on, always_off, traceidratio or a parentbased_ one")
        }
        for propagator in (env["OTEL_PROPAGATORS"] ?? "").split(separator: ",") {
            let name = propagator.trimmingCharacters(in: .whitespaces).lowercased()
            guard ["tracecontext", "none", ""].contains(name) else {
                throw CLIError("OTEL_PROPAGATORS: \(name) is not supported; use tracecontext or none")
            }
        }
    }
}
