import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat
import ServiceLifecycle
import WebImage
import WebImageOrigin
import WebImageServer

/// An ``ImageServer`` mounted in a real Hummingbird app on 127.0.0.1 and an ephemeral port,
/// beside a real origin, with a client to call it.
struct ServerHarness {
    let server: ImageServer
    let origin: ImageOrigin
    let port: Int
    let client: HTTPClient

    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: String]? { try? JSONDecoder().decode([String: String].self, from: body) }
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// `/img?` + the query built from `parameters` (values percent-encoded).
    func imgPath(_ parameters: [(String, String)]) -> String {
        "/img?" + parameters.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
    }

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? value
    }

    func get(_ pathAndQuery: String, headers: [(String, String)] = []) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(pathAndQuery)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 100 << 20)
        var fields: [String: String] = [:]
        for field in response.headers { fields[field.name.lowercased()] = field.value }
        return Reply(status: Int(response.status.code), headers: fields, body: Data(buffer: body))
    }

    /// `/img` for the origin's image `name` with more parameters.
    func image(_ name: String, query: String? = nil, _ parameters: [(String, String)] = [], headers: [(String, String)] = []) async throws -> Reply {
        try await get(imgPath([("url", origin.imageURL(name, query: query).absoluteString)] + parameters), headers: headers)
    }
}

/// Starts an origin (with `files`) and a server configured by `change` (private networks allowed
/// unless `change` says otherwise: the origin is on 127.0.0.1), runs `body`, stops both.
func withImageServer<T>(
    files: [String: Data]? = nil, _ change: (inout ImageServerConfiguration) -> Void = { _ in },
    _ body: (ServerHarness) async throws -> T
) async throws -> T {
    try await withOrigin(files: files) { origin in
        try await withImageServer(origin: origin, change, body)
    }
}

/// A server configured by `change` in front of a running `origin`.
func withImageServer<T>(
    origin: ImageOrigin, _ change: (inout ImageServerConfiguration) -> Void = { _ in },
    _ body: (ServerHarness) async throws -> T
) async throws -> T {
    var configuration = ImageServerConfiguration()
    configuration.allowPrivateNetworks = true
    // Generous under full-suite load on 2 cores; the timeout tests set their own.
    configuration.fetchTimeout = .seconds(60)
    configuration.processingTimeout = .seconds(120)
    change(&configuration)
    let server = try ImageServer(configuration: configuration, logger: quietLogger)
    let router = Router(context: ImageServerRequestContext.self)
    router.add(middleware: AccessLogMiddleware(logger: quietLogger))
    server.addRoutes(to: router)
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        },
        logger: quietLogger)
    // Stopped by graceful shutdown, as the origin is (cancelling alone can trap in NIO).
    var groupConfiguration = ServiceGroupConfiguration(services: [app], logger: quietLogger)
    groupConfiguration.maximumGracefulShutdownDuration = .seconds(2)
    let group = ServiceGroup(configuration: groupConfiguration)
    let task = Task { try await group.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next(), port > 0 else { throw OriginError.didNotStart }
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    let harness = ServerHarness(server: server, origin: origin, port: port, client: client)
    do {
        let result = try await body(harness)
        try await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        return result
    } catch {
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        throw error
    }
}

let quietLogger: Logger = {
    var logger = Logger(label: "webimage.tests.server")
    logger.logLevel = .critical
    return logger
}()

/// Sends every connection to the origin on 127.0.0.1, whatever address the guard chose, and
/// records the addresses it was asked for. It refuses to connect anywhere but loopback even if
/// the guard were broken: a test can never send a packet to a private or public network.
final class LoopbackConnector: PinnedConnecting {
    let originPort: Int
    private let inner = PinnedHTTPConnector()
    private let log = Locked<[IPAddress]>([])
    /// Addresses that stand for the origin (documentation ranges, TEST-NET-3): connected to 127.0.0.1.
    static let publicStandIn = IPAddress("203.0.113.10")!

    init(originPort: Int) { self.originPort = originPort }

    var attempts: [IPAddress] { log.withLock { $0 } }

    func loadData(for request: DataRequest, address: IPAddress) async throws -> DataTransfer {
        log.withLock { $0.append(address) }
        let loopback = address == Self.publicStandIn || address.description.hasPrefix("127.")
        guard loopback else { throw ImageDownloadError.requestRefused }
        var outgoing = request
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!
        components.port = originPort
        outgoing.url = components.url!
        return try await inner.loadData(for: outgoing, address: IPAddress("127.0.0.1")!)
    }
}
