public import Hummingbird
public import NIOCore

/// A request context that knows the peer's address, which the per-client render limit
/// (``ImageServerConfiguration/maxRendersPerClient``) needs, and the connection, so that a render
/// stops when its client goes away. Routes added to a router of another context still work;
/// without the peer address the limit keys on `X-Forwarded-For` alone, and a render whose client
/// left runs on to its deadline.
///
/// ```swift
/// let router = Router(context: ImageServerRequestContext.self)
/// server.addRoutes(to: router)
/// ```
public struct ImageServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The address of the connection's other end (a client, or a proxy in front).
    public let remoteAddress: SocketAddress?
    /// The connection the request came on.
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}

/// What a route knows of the client a request came from: its address, for the per-client limit,
/// and its connection, to learn when it leaves.
struct RequestClient: Sendable {
    var peer: SocketAddress?
    var channel: (any Channel)?

    init(_ context: some RequestContext) {
        peer = (context as? any RemoteAddressRequestContext)?.remoteAddress
        channel = (context as? ImageServerRequestContext)?.channel
    }

    init(peer: SocketAddress?) { self.peer = peer }

    /// The connection's watch (nil when the connection was not made by ``ConnectionLimits/serverBuilder()``).
    func watch() async -> ConnectionWatch? {
        guard let channel else { return nil }
        return await ConnectionWatch.of(channel)
    }
}
