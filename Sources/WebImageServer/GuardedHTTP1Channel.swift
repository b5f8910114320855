public import HummingbirdCore
import Logging
public import Metrics
public import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 connection with ``ConnectionLimits``' timers and header limits: the same
/// pipeline, plus ``ConnectionDeadlineHandler`` after the decoder and ``FirstByteWatcher`` in front.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let limits: ConnectionLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = self.limits
        if let bytes = limits.sendBufferBytes {
            // A socket option the kernel may clamp; a failure leaves autotuning, not a refusal.
            _ = try? channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(clamping: bytes))
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let deadlines = ConnectionDeadlineHandler(limits: limits)
            try pipeline.addHandler(deadlines, position: .after(decoder))
            try pipeline.addHandler(FirstByteWatcher(deadlines), position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension ConnectionLimits {
    /// The HTTP/1 server for `Application(server:)`: head size and field-count limits in the
    /// decoder, and the head, idle and request timers on every connection.
    public func serverBuilder() -> HTTPServerBuilder {
        let limits = self
        return HTTPServerBuilder { responder in
            let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
                maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
                maxHeaderFieldCount: limits.maxHeaderCount)
            let configuration = HTTP1Channel.Configuration(httpDecoderConfiguration: decoder)
            return GuardedHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: configuration), limits: limits)
        }
    }

    /// Puts the connection caps in front of the listening channel (`onServerRunning`'s argument):
    /// from then on a connection over ``maxConnections`` or ``maxConnectionsPerClient`` is closed
    /// as it is accepted. Counts `webimage_server_connections_open` and
    /// `webimage_server_connections_refused_total{reason}` into `factory`.
    public func guardAccepts(on listener: any Channel, factory: any MetricsFactory) async throws {
        let count = ConnectionCount(maxTotal: maxConnections, maxPerClient: maxConnectionsPerClient)
        try await listener.eventLoop.submit {
            try listener.pipeline.syncOperations.addHandler(ConnectionAdmissionHandler(count: count, factory: factory), position: .first)
        }.get()
    }
}
