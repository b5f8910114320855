import Metrics

/// The server's counters, through swift-metrics into the factory it is given (the server's own
/// Prometheus registry, so that several servers in one process keep separate counts).
///
/// `webimage_server_requests_total{status}`, `webimage_server_stage_seconds{stage}` (fetch,
/// decode, process, encode, total), `webimage_server_result_cache_total{result}` (memory, disk,
/// miss), `webimage_server_queue_depth`, `webimage_server_renders_running`,
/// `webimage_server_source_bytes_total`, `webimage_server_response_bytes_total`.
struct ServerMetrics: Sendable {
    let factory: any MetricsFactory
    let queueDepth: Gauge
    let running: Gauge
    let bytesIn: Counter
    let bytesOut: Counter

    init(factory: any MetricsFactory) {
        self.factory = factory
        queueDepth = Gauge(label: "webimage_server_queue_depth", factory: factory)
        running = Gauge(label: "webimage_server_renders_running", factory: factory)
        bytesIn = Counter(label: "webimage_server_source_bytes_total", factory: factory)
        bytesOut = Counter(label: "webimage_server_response_bytes_total", factory: factory)
    }

    func request(status: Int) {
        Counter(label: "webimage_server_requests_total", dimensions: [("status", String(status))], factory: factory).increment()
    }

    func stage(_ name: String, _ duration: Duration) {
        Metrics.Timer(label: "webimage_server_stage_seconds", dimensions: [("stage", name)], factory: factory).recordNanoseconds(duration.nanoseconds)
    }

    func resultCache(_ result: String) {
        Counter(label: "webimage_server_result_cache_total", dimensions: [("result", result)], factory: factory).increment()
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    var milliseconds: Double { Double(nanoseconds) / 1_000_000 }

    /// Milliseconds with one decimal, rounded (`12.3`), as `Server-Timing`'s `dur=` is written:
    /// integer arithmetic instead of `String(format:)`, a CoreFoundation format parse per value
    /// (three a rendered request). Negative durations count as zero; past 10⁹ s it is clamped.
    var millisecondsWithOneDecimal: String {
        guard self > .zero else { return "0.0" }
        let (seconds, attoseconds) = components
        let tenths = min(max(seconds, 0), 1_000_000_000) * 10_000 + (max(attoseconds, 0) + 50_000_000_000_000) / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
