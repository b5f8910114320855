import WebImageServer

extension ServeOptions {
    /// The connection guards: timeouts, caps and header limits (docs/DEPLOY.md, "Limits").
    /// `descriptors` is the process's open-file limit; the connection cap stays below it.
    func connectionLimits(
        _ env: [String: String], server: ImageServerConfiguration, descriptors: Int? = ConnectionLimits.descriptorLimit()
    ) throws -> ConnectionLimits {
        var limits = ConnectionLimits()
        func timeout(_ flag: Double?, _ variable: String) throws -> Duration? {
            guard let seconds = try Self.value(flag, variable, env) else { return nil }
            let duration = try Self.seconds(seconds)
            guard duration > .zero else { throw CLIError("\(variable) must be more than 0 seconds") }
            return duration
        }
        if let v = try timeout(headTimeout, "WEBIMAGE_HEAD_TIMEOUT") { limits.headTimeout = v }
        if let v = try timeout(idleTimeout, "WEBIMAGE_IDLE_TIMEOUT") { limits.idleTimeout = v }
        // By default a request may take every deadline of its own (fetch, waiting for memory,
        // rendering) plus 30 s for waiting in the queue and writing the answer.
        limits.requestTimeout = try timeout(requestTimeout, "WEBIMAGE_REQUEST_TIMEOUT")
            ?? server.fetchTimeout + server.processingTimeout * 2 + .seconds(30)
        let ceiling = ConnectionLimits.connectionCeiling(descriptors: descriptors)
        if let v = try Self.value(maxConnections, "WEBIMAGE_MAX_CONNECTIONS", env) {
            guard (1...ceiling).contains(v) else {
                let why = descriptors.map { "the open-file limit (ulimit -n) is \($0), of which \(ConnectionLimits.headroom(descriptors: $0)) are kept for origins, caches and logs" }
                throw CLIError("the connection limit must be from 1 to \(ceiling)" + (why.map { ": \($0)" } ?? ""))
            }
            limits.maxConnections = v
        } else {
            limits.maxConnections = min(limits.maxConnections, ceiling)
        }
        if let v = try Self.value(maxConnectionsPerClient, "WEBIMAGE_MAX_CONNECTIONS_PER_CLIENT", env) {
            guard v >= 1 else { throw CLIError("the per-client connection limit must be at least 1") }
            limits.maxConnectionsPerClient = v
        }
        if let v = try Self.value(maxHeaderBytes, "WEBIMAGE_MAX_HEADER_BYTES", env) {
            guard (1024...(16 << 20)).contains(v) else { throw CLIError("the header size limit must be from 1024 to 16777216 bytes") }
            limits.maxHeaderBytes = v
        }
        if let v = try Self.value(maxHeaders, "WEBIMAGE_MAX_HEADERS", env) {
            guard (1...65_534).contains(v) else { throw CLIError("the header count limit must be from 1 to 65534") }
            limits.maxHeaderCount = v
        }
        if let v = try Self.value(sendBufferKB, "WEBIMAGE_SEND_BUFFER_KB", env) {
            guard (0...(64 << 10)).contains(v) else { throw CLIError("the send buffer must be from 0 (the kernel's autotuning) to 65536 KB") }
            limits.sendBufferBytes = v == 0 ? nil : v << 10
        }
        return limits
    }
}
