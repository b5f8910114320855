import Foundation
import Logging
import Metrics
import OTel
import ServiceLifecycle
import Tracing

/// `serve --otlp-endpoint`: traces and metrics sent to an OpenTelemetry collector over OTLP/HTTP
/// (protobuf by default), beside `/metrics`, which stays.
///
/// Export is on when `--otlp-endpoint` (`WEBIMAGE_OTLP_ENDPOINT`) is given, or when one of the
/// standard `OTEL_EXPORTER_OTLP_*ENDPOINT` variables is set; never by default, so a server does not
/// send to `localhost:4318` unasked. The other standard `OTEL_*` variables apply as the
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

    static let standardEndpoints = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]

    /// The flag, else `WEBIMAGE_OTLP_ENDPOINT`.
    static func endpoint(_ flag: String?, _ env: [String: String]) -> String? {
        flag ?? env["WEBIMAGE_OTLP_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether export is asked for: an endpoint given, and the SDK not disabled.
    static func isRequested(endpoint flag: String?, environment env: [String: String]) -> Bool {
        guard env["OTEL_SDK_DISABLED"]?.lowercased() != "true" else { return false }
        return endpoint(flag, env) != nil || standardEndpoints.contains(where: { !(env[$0] ?? "").isEmpty })
    }

    /// The exporters `endpoint` (the flag or its variable) and the `OTEL_*` variables ask for.
    static func make(endpoint flag: String?, environment env: [String: String], logger: Logger) throws -> ServeTelemetry {
        guard isRequested(endpoint: flag, environment: env) else { return .none }
        let endpoint = endpoint(flag, env)
        try checkSupported(env)
        var configuration = OTel.Configuration.default
        configuration.serviceName = "webimage"
        configuration.diagnosticLogger = .custom(logger)
        configuration.logs.enabled = false  // logs stay on standard error, with trace ids in their metadata
        if let endpoint {
            try checkEndpoint(endpoint, name: flag != nil ? "--otlp-endpoint" : "WEBIMAGE_OTLP_ENDPOINT")
            configuration.traces.otlpExporter.endpoint = signalURL(endpoint, "traces")
            configuration.metrics.otlpExporter.endpoint = signalURL(endpoint, "metrics")
            // Our flag wins over the standard variables, as every flag wins over its variable; swift-otel
            // reads them from the process environment after this configuration, so they go.
            for name in standardEndpoints { unsetenv(name) }
        }
        var telemetry = ServeTelemetry()
        if env["OTEL_TRACES_EXPORTER"]?.lowercased() != "none" {
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            telemetry.tracer = backend.factory
            telemetry.services.append(backend.service)
        }
        if env["OTEL_METRICS_EXPORTER"]?.lowercased() != "none" {
            let backend = try OTel.makeMetricsBackend(configuration: configuration)
            telemetry.metrics = backend.factory
            telemetry.services.append(backend.service)
        }
        return telemetry
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
