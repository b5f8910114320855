public import Foundation
import Hummingbird
import WebImage
import HummingbirdCore
import HummingbirdTLS
import NIOSSL
import ServiceLifecycle
public import Logging

/// A real HTTP origin on 127.0.0.1 and an ephemeral port, serving images from memory.
///
/// Used by the tests, `webimage demo` and the benchmarks. It counts every request by path.
/// Query parameters make any image route misbehave on request — see ``OriginRoutes``.
///
/// ```swift
/// let origin = try await ImageOrigin.start(files: try SampleImages.standardSet())
/// let url = origin.url("/images/photo.jpg?delay=200")
/// // … load it …
/// print(origin.requestCount(path: "/images/photo.jpg"))
/// await origin.stop()
/// ```
public final class ImageOrigin: Sendable {
    /// The loopback address the server listens on (127.0.0.1 unless started with another).
    public let address: String
    /// The port the server listens on.
    public let port: Int
    /// `http`, or `https` when started with a certificate.
    public let scheme: String
    private let log: RequestLog
    private let files: FileStore
    private let robots: RobotsSetting
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Starts a server serving `files` (name → bytes) under `/images/`.
    /// - Parameter tls: PEM certificate and key; the server then speaks HTTPS only.
    /// - Parameter address: a loopback IPv4 address (127.0.0.0/8) to listen on; other addresses
    ///   are refused, so an origin never listens beyond this machine.
    public static func start(
        files: [String: Data], tls: (certificate: Data, key: Data)? = nil, logger: Logger? = nil, address: String = "127.0.0.1"
    ) async throws -> ImageOrigin {
        let octets = address.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard octets.count == 4, octets.allSatisfy({ $0 != nil }), octets[0] == 127 else { throw OriginError.notLoopback(address) }
        let log = RequestLog()
        let store = FileStore(files)
        let robots = RobotsSetting()
        let router = OriginRoutes.router(files: store, log: log, robots: robots)
        var quiet = Logger(label: "webimage.origin")
        quiet.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var server = HTTPServerBuilder.http1()
        if let tls {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(tls.certificate)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(tls.key), format: .pem)))
            server = try .tls(.http1(), tlsConfiguration: configuration)
        }
        let app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(address, port: 0), serverName: "webimage-origin"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger ?? quiet)
        // Stopped by a graceful shutdown, never by cancelling the server task alone: a
        // connection accepted but not yet handled when the task is cancelled is dropped with its
        // writer unfinished, which traps in NIO (swift-nio #3481). Handlers still busy after the
        // grace period (a route that hangs on purpose) are then cancelled.
        var configuration = ServiceGroupConfiguration(services: [app], logger: logger ?? quiet)
        configuration.maximumGracefulShutdownDuration = .milliseconds(300)
        let group = ServiceGroup(configuration: configuration)
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw OriginError.didNotStart
        }
        return ImageOrigin(address: address, port: port, scheme: tls == nil ? "http" : "https", log: log, files: store, robots: robots, group: group, task: task)
    }

    private init(address: String, port: Int, scheme: String, log: RequestLog, files: FileStore, robots: RobotsSetting, group: ServiceGroup, task: Task<Void, any Error>) {
        self.robots = robots
        self.address = address
        self.port = port
        self.scheme = scheme
        self.log = log
        self.files = files
        self.group = group
        self.task = task
    }

    /// `http://127.0.0.1:PORT` (or `https://`, or the address it was started on).
    public var baseURL: URL { URL(string: "\(scheme)://\(address):\(port)")! }

    /// An absolute URL for `pathAndQuery` (which starts with `/`).
    public func url(_ pathAndQuery: String) -> URL { URL(string: "\(scheme)://\(address):\(port)\(pathAndQuery)")! }

    /// The URL of an image served by name.
    public func imageURL(_ name: String, query: String? = nil) -> URL {
        url("/images/\(name)" + (query.map { "?\($0)" } ?? ""))
    }

    /// Names of the images served.
    public var imageNames: [String] { files.names }

    /// Adds or replaces a served image.
    public func setImage(_ data: Data, named name: String) { files.set(data, name) }

    /// What `GET /robots.txt` answers from now on (`nil`: 404).
    public func setRobots(_ answer: RobotsAnswer?) { robots.current = answer }

    /// Requests served for `path` (without query), counted when they arrive.
    public func requestCount(path: String) -> Int { log.count(path) }

    /// Requests served in all.
    public var totalRequests: Int { log.totalCount }

    /// Every request so far, in arrival order (the last 50,000 to 100,000 of a long run).
    public var requests: [LoggedRequest] { log.entries }

    /// Every request so far but those for `/robots.txt` (which `webimage fetch` asks first, once
    /// a run): what the tests of other behaviour count.
    public var contentRequests: [LoggedRequest] { log.entries.filter { $0.path != "/robots.txt" } }

    /// The most requests the origin was handling at once.
    public var maxConcurrentRequests: Int { log.maxInFlight }

    /// Streamed bodies for `path` that the client stopped reading (connection dropped).
    public func abortedBodies(path: String) -> Int { log.aborted(path) }

    /// Body bytes written for `path` by streamed responses.
    public func bytesSent(path: String) -> Int { log.bytesSent(path) }

    /// Forgets all log.
    public func resetCounts() { log.reset() }

    /// Stops the server and waits until it has closed.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}

public enum OriginError: Error, CustomStringConvertible {
    case didNotStart
    case notLoopback(String)
    public var description: String {
        switch self {
        case .didNotStart: "the image origin did not start"
        case .notLoopback(let address): "\(address) is no loopback IPv4 address (127.0.0.0/8): the origin listens on this machine only"
        }
    }
}

/// The images served, by name, each with a version that changes when it is replaced.
final class FileStore: Sendable {
    struct File: Sendable {
        var data: Data
        var version: Int
        var etag: String { "\"v\(version)-\(data.count)\"" }
    }

    private let state: Locked<[String: File]>
    init(_ files: [String: Data]) { state = Locked(files.mapValues { File(data: $0, version: 1) }) }
    subscript(name: String) -> File? { state.withLock { $0[name] } }
    func set(_ data: Data, _ name: String) {
        state.withLock { $0[name] = File(data: data, version: ($0[name]?.version ?? 0) + 1) }
    }
    var names: [String] { state.withLock { $0.keys.sorted() } }
}
