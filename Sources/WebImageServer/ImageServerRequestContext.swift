public import Hummingbird
public import NIOCore

/// A request context that knows the peer's address, which the per-client render limit
/// (``ImageServerConfiguration/maxRendersPerClient``) needs. Routes added to a router of
/// another context still work; without the peer address the limit keys on `X-Forwarded-For`
/// alone.
///
/// ```swift
/// let router = Router(context: ImageServerRequestContext.self)
/// server.addRoutes(to: router)
/// ```
public struct ImageServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The address of the connection's other end (a client, or a proxy in front).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
