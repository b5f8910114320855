public import AsyncHTTPClient
import Foundation
internal import NIOCore
internal import NIOFoundationCompat
internal import NIOHTTP1
internal import NIOSSL

/// The default ``DataLoading``: AsyncHTTPClient, streaming bodies chunk by chunk.
///
/// It follows at most 10 redirects and refuses redirect cycles. Create one per process and
/// share it; it owns an `HTTPClient` and shuts it down when released (or call ``shutdown()``).
///
/// ```swift
/// let loader = HTTPDataLoader(maxRedirects: 5)
/// let pipeline = ImagePipeline(configuration: .init(downloader: ImageDownloader(loader: loader)))
/// ```
///
/// The same example is compiled with every build as `Snippets/LoaderSetup.swift`.
public final class HTTPDataLoader: DataLoading {
    public let client: HTTPClient
    private let ownsClient: Bool

    /// Creates a loader with its own `HTTPClient`.
    /// - Parameters:
    ///   - maxRedirects: redirects followed before the load fails (each hop is a new request);
    ///     `0` returns a redirect's response as it is, for a ``RedirectFollowingLoader``.
    ///   - connectTimeout: how long a TCP and TLS connection may take.
    ///   - allowsInvalidCertificates: accept any TLS certificate (self-signed, expired,
    ///     wrong host). Off by default; for development servers only.
    public init(maxRedirects: Int = 10, connectTimeout: Duration = .seconds(10), allowsInvalidCertificates: Bool = false) {
        var configuration = HTTPClient.Configuration()
        if allowsInvalidCertificates {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            configuration.tlsConfiguration = tls
        }
        configuration.redirectConfiguration = maxRedirects > 0 ? .follow(max: maxRedirects, allowCycles: false) : .disallow
        configuration.timeout.connect = .nanoseconds(connectTimeout.nanoseconds)
        configuration.decompression = .disabled
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 16)
        // One retry mechanism, not two nested ones: a refused or failed connection fails the
        // attempt at once and the downloader's RetryPolicy decides (AsyncHTTPClient's own
        // re-dialling would hold every attempt until the connect timeout, 3 × 10 s for a dead host).
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        ownsClient = true
    }

    /// Uses a client you own and shut down yourself.
    public init(client: HTTPClient) {
        self.client = client
        ownsClient = false
    }

    deinit {
        if ownsClient { client.shutdown { _ in } }
    }

    /// Shuts the owned client down; the loader cannot be used afterwards.
    public func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = .GET
        for field in request.headers { outgoing.headers.add(name: field.name, value: field.value) }
        let timeout = TimeAmount.nanoseconds(request.timeout.nanoseconds)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout)
        } catch {
            throw ImageDownloadError(transportError: error)
        }
        let head = DataResponse(
            url: response.url ?? request.url,
            statusCode: Int(response.status.code),
            headers: response.headers.map { HTTPField($0.name, $0.value) })
        let body = DataBody(MappedBody(base: response.body)) { $0 }
        return DataTransfer(response: head, body: body)
    }
}

/// Converts AsyncHTTPClient's `ByteBuffer` chunks and errors into `Data` and ``ImageDownloadError``.
private struct MappedBody: AsyncSequence, Sendable {
    typealias Element = Data
    let base: HTTPClientResponse.Body

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator
        mutating func next() async throws -> Data? {
            do {
                guard let buffer = try await base.next() else { return nil }
                // No copy when the chunk fills most of NIO's read buffer: the Data then keeps that
                // storage alive, and a body kept as one chunk would otherwise hold the headers and
                // spare capacity too (4–6 KB per small body, measured in review). Else a copy.
                let mostly = buffer.readableBytes >= buffer.storageCapacity - buffer.storageCapacity / 4
                return Data(buffer: buffer, byteTransferStrategy: mostly ? .noCopy : .copy)
            } catch {
                throw ImageDownloadError(transportError: error)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator()) }
}

extension ImageDownloadError {
    /// Classifies an error thrown by AsyncHTTPClient or the task.
    init(transportError error: any Error) {
        if let error = error as? ImageDownloadError { self = error; return }
        if error is CancellationError { self = .cancelled; return }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                self = .timedOut; return
            case .cancelled:
                self = .cancelled; return
            case .redirectLimitReached, .redirectCycleDetected:
                self = .tooManyRedirects; return
            case .invalidURL, .emptyHost, .emptyScheme:
                self = .invalidURL(String(describing: error)); return
            default: break
            }
        }
        self = .transport(underlying: error)
    }
}

/// Transport failures that trying again will not fix.
enum TransportFailure {
    /// TLS failures (an untrusted or invalid certificate, a failed handshake) are permanent.
    static func isPermanent(_ error: any Error) -> Bool {
        if error is any PermanentlyFailing { return true }
        if error is NIOSSLError || error is BoringSSLError { return true }
        if error is TLSFailure { return true }  // URLSessionDataLoader's libcurl TLS errors
        return String(reflecting: type(of: error)).contains("SSL")
    }
}
