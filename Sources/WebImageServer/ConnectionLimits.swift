import Foundation

/// How long a connection may take at each stage, and how many connections the server keeps open:
/// the guards against slow and idle clients (slowloris, idle floods) that hold sockets and file
/// descriptors without costing the client anything. docs/architecture/server.md says why each exists.
///
/// ```swift
/// var limits = ConnectionLimits()
/// limits.headTimeout = .seconds(5)
/// limits.maxConnections = min(limits.maxConnections, ConnectionLimits.connectionCeiling())
/// let app = Application(router: router, server: limits.serverBuilder(),
///                       onServerRunning: { try? await limits.guardAccepts(on: $0, factory: factory) })
/// ```
public struct ConnectionLimits: Sendable {
    /// Time to receive a whole request head: from accept for the first request, from the first
    /// byte for the next ones on a kept-alive connection (nginx's `client_header_timeout`).
    public var headTimeout: Duration = .seconds(10)
    /// Time a kept-alive connection may wait, with no request in progress, for the next request's
    /// first byte (nginx's `keepalive_timeout`).
    public var idleTimeout: Duration = .seconds(75)
    /// Time from a request's complete head to the end of its response, writing included: a backstop
    /// for what the routes' own deadlines do not cover (a client that does not read its answer).
    public var requestTimeout: Duration = .seconds(30)
    /// Connections open at once; more are closed at accept, before anything is read.
    public var maxConnections: Int = 10_000
    /// Connections one client address may have open at once.
    public var maxConnectionsPerClient: Int = 256
    /// Bytes of the request line and header fields together (and so of any one field).
    public var maxHeaderBytes: Int = 32 << 10
    /// Header fields in one request.
    public var maxHeaderCount: Int = 100
    /// The kernel's send buffer for each connection (`SO_SNDBUF`, which Linux doubles for its own
    /// bookkeeping); `nil` leaves Linux's autotuning, which grows it to `tcp_wmem`'s maximum (4 MB
    /// here) for a client that does not read: 250 such connections held 650 MB of kernel memory,
    /// which a container's memory limit counts (red team, stop 53). 256 KB still sends 2.5 MB/s
    /// over a 100 ms round trip, per connection.
    public var sendBufferBytes: Int? = 256 << 10

    public init() {}

    /// The soft limit on open file descriptors of this process (`RLIMIT_NOFILE`), or `nil` when it
    /// cannot be read or is unlimited.
    public static func descriptorLimit() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        return Int(exactly: limit.rlim_cur)  // RLIM_INFINITY (all ones) is no Int: nil
    }

    /// Descriptors kept free of client connections: for connections to origins, cache files, the
    /// cache database and logs. A quarter of the limit, at least 32 and at most 1024.
    public static func headroom(descriptors: Int) -> Int {
        min(1024, max(32, descriptors / 4))
    }

    /// The most client connections the descriptor limit allows: the limit less the headroom, at
    /// least 1; 10,000 when the limit is unknown or unlimited.
    public static func connectionCeiling(descriptors: Int? = descriptorLimit()) -> Int {
        guard let descriptors else { return 10_000 }
        return max(1, descriptors - headroom(descriptors: descriptors))
    }
}
