import Metrics
import NIOCore
import WebImage

/// Open client connections, in total and per client address, shared by every event loop.
final class ConnectionCount: Sendable {
    private struct State {
        var total = 0
        var perClient: [String: Int] = [:]
    }

    private let state = Locked(State())
    let maxTotal: Int
    let maxPerClient: Int

    init(maxTotal: Int, maxPerClient: Int) {
        self.maxTotal = maxTotal
        self.maxPerClient = maxPerClient
    }

    enum Refusal: String { case total, perClient = "per_client" }

    /// Counts a new connection from `client`, or says which cap it would pass.
    func admit(_ client: String) -> Refusal? {
        state.withLock { state in
            if state.total >= maxTotal { return .total }
            let mine = state.perClient[client, default: 0]
            if mine >= maxPerClient { return .perClient }
            state.total += 1
            state.perClient[client] = mine + 1
            return nil
        }
    }

    func release(_ client: String) {
        state.withLock { state in
            state.total -= 1
            let mine = state.perClient[client, default: 1] - 1
            state.perClient[client] = mine > 0 ? mine : nil
        }
    }

    var open: Int { state.withLock { $0.total } }
}

/// First handler of the listening channel: sees each accepted connection before it is set up
/// and closes it when a cap is reached, before a byte is read from it. A closed connection gives
/// its count back when it closes, however it closes.
final class ConnectionAdmissionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    let count: ConnectionCount
    let refused: (ConnectionCount.Refusal) -> Void
    let opened: Gauge

    init(count: ConnectionCount, factory: any MetricsFactory) {
        self.count = count
        self.opened = Gauge(label: "webimage_server_connections_open", factory: factory)
        self.refused = { reason in
            Counter(label: "webimage_server_connections_refused_total", dimensions: [("reason", reason.rawValue)], factory: factory).increment()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let connection = unwrapInboundIn(data)
        let client = connection.remoteAddress?.ipAddress ?? "unknown"
        if let refusal = count.admit(client) {
            refused(refusal)
            connection.close(promise: nil)
            return
        }
        opened.record(count.open)
        let count = self.count, opened = self.opened
        connection.closeFuture.whenComplete { _ in
            count.release(client)
            opened.record(count.open)
        }
        context.fireChannelRead(data)
    }
}
