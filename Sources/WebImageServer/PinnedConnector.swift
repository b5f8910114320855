import AsyncHTTPClient
import NIOSSL
public import Foundation
public import WebImage

/// Sends one request to exactly the address the guard checked, never to a name resolved again
/// (so a DNS answer that changes between check and connect — rebinding — cannot redirect it).
/// Redirects are returned, not followed: the guard checks each hop.
public protocol PinnedConnecting: Sendable {
    /// Sends `request` to `address`, keeping `request.url`'s host name for `Host`, TLS SNI and
    /// certificate checks.
    func loadData(for request: DataRequest, address: IPAddress) async throws -> DataTransfer
}

/// The default ``PinnedConnecting`` over AsyncHTTPClient.
///
/// `http`: the URL's host is replaced by the address and `Host` keeps the name, through one
/// shared client (connections pooled per address). `https`: a client per request whose
/// `dnsOverride` maps the name to the address, so SNI and certificate checks use the name.
///
/// Certificates of https sources are verified against the system's roots, plus any given here
/// (a private CA that signs internal origins):
///
/// ```swift
/// let connector = try PinnedHTTPConnector(trustingPEM: [Data(contentsOf: URL(fileURLWithPath: "/etc/ssl/internal-ca.pem"))])
/// ```
public final class PinnedHTTPConnector: PinnedConnecting {
    private let client: HTTPClient
    private let connectTimeout: Duration
    private let tls: TLSConfiguration?

    public convenience init(connectTimeout: Duration = .seconds(5)) {
        self.init(connectTimeout: connectTimeout, tls: nil)
    }

    /// A connector that also trusts the certificates in `pem` (each item PEM text with one or
    /// more certificates) for https sources; throws when an item holds no valid certificate.
    public convenience init(connectTimeout: Duration = .seconds(5), trustingPEM pem: [Data]) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        let certificates = try pem.flatMap { item in
            let found = try NIOSSLCertificate.fromPEMBytes(Array(item))
            guard !found.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
            return found
        }
        tls.additionalTrustRoots = certificates.isEmpty ? [] : [.certificates(certificates)]
        self.init(connectTimeout: connectTimeout, tls: tls)
    }

    private init(connectTimeout: Duration, tls: TLSConfiguration?) {
        self.connectTimeout = connectTimeout
        self.tls = tls
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: Self.configuration(connectTimeout))
    }

    deinit { client.shutdown { _ in } }

    static func configuration(_ connectTimeout: Duration) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .nanoseconds(connectTimeout.nanoseconds)
        configuration.decompression = .disabled
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        configuration.connectionPool.retryConnectionEstablishment = false
        // No trace context to origins: they are strangers, and a `traceparent` would hand them the
        // server's trace and span ids (`serve --otlp-endpoint`). The pipeline's spans time the fetch.
        configuration.tracing.tracer = nil
        return configuration
    }

    public func loadData(for request: DataRequest, address: IPAddress) async throws -> DataTransfer {
        guard let host = request.url.host.map(GuardedDataLoader.bare) else { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
        if request.url.scheme?.lowercased() == "https" {
            var configuration = Self.configuration(connectTimeout)
            configuration.dnsOverride = [host: address.description]
            if let tls { configuration.tlsConfiguration = tls }
            let owner = OwnedClient(HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration))
            let transfer = try await HTTPDataLoader(client: owner.client).loadData(for: request)
            // The client lives as long as the body is read, then shuts down.
            return DataTransfer(response: transfer.response, body: DataBody(transfer.body) { chunk in withExtendedLifetime(owner) { chunk } })
        }
        let port = request.url.port.map { ":\($0)" } ?? ""
        let path = request.url.path(percentEncoded: true)
        let query = request.url.query(percentEncoded: true).map { "?\($0)" } ?? ""
        guard let pinned = URL(string: "http://\(address.urlHost)\(port)\(path.isEmpty ? "/" : path)\(query)") else {
            throw ImageDownloadError.invalidURL(request.url.absoluteString)
        }
        var outgoing = request
        outgoing.url = pinned
        outgoing.headers.removeAll { $0.name.lowercased() == "host" }
        outgoing.headers.append(HTTPField("Host", host.contains(":") ? "[\(host)]\(port)" : host + port))
        return try await HTTPDataLoader(client: client).loadData(for: outgoing)
    }
}

/// Shuts a per-request client down once nothing uses it.
private final class OwnedClient: Sendable {
    let client: HTTPClient
    init(_ client: HTTPClient) { self.client = client }
    deinit { client.shutdown { _ in } }
}
