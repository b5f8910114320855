import NIOCore
import NIOHTTP1

/// One timer per connection, set for what the connection is waiting for:
///
/// - a request head, from accept (first request) or from the next request's first byte:
///   `headTimeout` — a client sending a partial head a byte at a time is closed when it runs out;
/// - the next request on a kept-alive connection with nothing in progress: `idleTimeout`;
/// - the end of a response, from its request's complete head: `requestTimeout`.
///
/// When the timer fires the connection is closed. A head over the decoder's size or field-count
/// limit is answered `431` and the connection closed. Sits right after the HTTP/1 decoder, and
/// puts a ``FirstByteWatcher`` at the front of the pipeline to learn when bytes arrive. Owns the
/// connection's ``ConnectionWatch``, closed when the client closes its side or the connection ends.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Phase { case head, idle, request }

    private let limits: ConnectionLimits
    /// Told when the client goes; read by the requests of this connection.
    let watch = ConnectionWatch()
    private var phase = Phase.head
    private var inProgress = 0
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(limits: ConnectionLimits) { self.limits = limits }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        arm(limits.headTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        watch.close()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The server allows half-closure (so a response can still be written after the
        // client's FIN), which means a client that leaves shows up here and not as an inactive
        // channel: its renders must hear of it now.
        if let event = event as? ChannelEvent, event == .inputClosed { watch.close() }
        context.fireUserInboundEventTriggered(event)
    }

    /// Bytes arrived (from ``FirstByteWatcher``): an idle connection starts its next head.
    func bytesArrived() {
        guard phase == .idle else { return }
        phase = .head
        arm(limits.headTimeout)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            inProgress += 1
            if phase != .request {
                phase = .request
                arm(limits.requestTimeout)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), inProgress > 0 {
            inProgress -= 1
            // A pipelined request waiting behind this one gets a whole request time of its own.
            if inProgress == 0 {
                phase = .idle
                arm(limits.idleTimeout)
            } else {
                arm(limits.requestTimeout)
            }
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Over a header limit, with no response under way: say so, then close.
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow, inProgress == 0 else {
            context.fireErrorCaught(error)
            return
        }
        timer?.cancel()
        let head = HTTPResponseHead(
            version: .http1_1, status: .requestHeaderFieldsTooLarge,
            headers: ["Connection": "close", "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    private func arm(_ timeout: Duration) {
        timer?.cancel()
        guard let context else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            loopBound.value.close(promise: nil)
        }
    }
}

/// The front of a connection's pipeline: tells ``ConnectionDeadlineHandler`` that bytes arrived
/// before the decoder has made a request of them.
final class FirstByteWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadlines: ConnectionDeadlineHandler

    init(_ deadlines: ConnectionDeadlineHandler) { self.deadlines = deadlines }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadlines.bytesArrived()
        context.fireChannelRead(data)
    }
}
