public import Foundation

/// One HTTP request as the loading layer sees it.
public struct DataRequest: Sendable, Hashable {
    public var url: URL
    /// Header fields in order; later fields with the same name are added, not replaced.
    public var headers: [HTTPField]
    /// Total time allowed for the request, response and body.
    public var timeout: Duration
    /// A hint: the caller refuses bodies larger than this, so a loader that reads ahead of its
    /// consumer may stop reading past it (the caller enforces the limit either way).
    public var maxBodySize: Int?

    public init(url: URL, headers: [HTTPField] = [], timeout: Duration = .seconds(15), maxBodySize: Int? = nil) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maxBodySize = maxBodySize
    }
}

/// A header field.
public struct HTTPField: Sendable, Hashable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// The head of an HTTP response.
public struct DataResponse: Sendable, Hashable {
    public var url: URL
    public var statusCode: Int
    public var headers: [HTTPField]

    public init(url: URL, statusCode: Int, headers: [HTTPField]) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
    }

    /// The first value of a header, compared case-insensitively.
    public func value(forHeader name: String) -> String? {
        headers.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Every field named `name` joined with `, ` (for list headers such as `Cache-Control`).
    func listValue(forHeader name: String) -> String? {
        let values = headers.filter { Self.namesMatch($0.name, name) }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Header names are ASCII: compare them byte by byte, ignoring case, without allocating.
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in x == y || x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A }
    }

    /// `Content-Length`, if the server sent a valid one (digits only; every field and list
    /// member the same). A length past `Int.max` reads as `Int.max`, which any size limit refuses.
    public var expectedContentLength: Int? {
        (try? HTTPHeaderValue.contentLength(self)) ?? nil
    }
}

/// Fetches bytes over a transport and streams them back.
///
/// The default implementation is ``HTTPDataLoader`` (AsyncHTTPClient). A loader throws
/// ``ImageDownloadError`` for transport failures; status codes are judged by the caller.
///
/// ```swift
/// let transfer = try await loader.loadData(for: DataRequest(url: url))
/// for try await chunk in transfer.body { received += chunk.count }
/// ```
public protocol DataLoading: Sendable {
    /// Sends `request` and returns once the response head has arrived. Cancelling the
    /// consuming task, or dropping the body unread, closes the connection.
    func loadData(for request: DataRequest) async throws -> DataTransfer

    /// Whether this loader fetches `url` at all; the downloader refuses any other URL with
    /// ``ImageDownloadError/invalidURL(_:)`` before queueing it. The default: `http` and
    /// `https` URLs with a host. A loader of other schemes (a file system, an object store)
    /// says so here; the caches key its URLs as they key any other.
    func canLoad(_ url: URL) -> Bool
}

extension DataLoading {
    public func canLoad(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && url.host != nil
    }
}

/// A response head and its body, which arrives in chunks.
public struct DataTransfer: Sendable {
    public var response: DataResponse
    public var body: DataBody
    /// The headers (names lowercased) the downloader's request modifier added, removed or changed
    /// on the way out; set by the downloader, empty for what a loader returns.
    var headersChangedByModifier: Set<String> = []

    public init(response: DataResponse, body: DataBody) {
        self.response = response
        self.body = body
    }
}

/// The body of a response: an `AsyncSequence` of chunks, read once.
public struct DataBody: AsyncSequence, Sendable {
    public typealias Element = Data

    private let makeNext: @Sendable () -> (() async throws -> Data?)

    /// Wraps any sendable async sequence, converting its elements to `Data`.
    public init<Base: AsyncSequence & Sendable>(
        _ base: Base, transform: @escaping @Sendable (Base.Element) -> Data
    ) {
        makeNext = {
            var iterator = base.makeAsyncIterator()
            return { try await iterator.next().map(transform) }
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> Data?
        public mutating func next() async throws -> Data? { try await nextChunk() }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(nextChunk: makeNext())
    }
}
