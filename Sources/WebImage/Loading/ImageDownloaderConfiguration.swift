/// Settings of an ``ImageDownloader``, with SDWebImage's defaults where it has one.
///
/// ```swift
/// var configuration = ImageDownloaderConfiguration()
/// configuration.maxConcurrentDownloads = 4
/// configuration.executionOrder = .lifo
/// configuration.requestModifier = { request in
///     var request = request
///     request.headers.append(HTTPField("X-Token", await tokens.current()))
///     return request
/// }
/// let downloader = ImageDownloader(configuration: configuration)
/// ```
public struct ImageDownloaderConfiguration: Sendable {
    /// Downloads running at once (SDWebImage: 6). Change it later with
    /// ``ImageDownloader/setMaxConcurrentDownloads(_:)``.
    public var maxConcurrentDownloads: Int = 6
    /// Order among waiting downloads of equal priority.
    public var executionOrder: ExecutionOrder = .fifo
    /// Time allowed for one attempt, from sending to the last body byte (SDWebImage: 15 s).
    public var timeout: Duration = .seconds(15)
    /// Status codes accepted as success.
    public var acceptableStatusCodes: Range<Int> = 200..<300
    /// Accepted `Content-Type` values (compared without parameters); `nil` accepts any.
    public var acceptableContentTypes: Set<String>? = nil
    /// Bodies larger than this are refused: early from `Content-Length`, else while streaming.
    /// Default 50 MB.
    public var maxBodySize: Int = 50 * 1024 * 1024
    /// Headers sent with every request. Change them later with ``ImageDownloader/setHeader(_:for:)``.
    public var headers: [HTTPField] = ImageDownloaderConfiguration.defaultHeaders
    /// Answer to a `401` challenge when the request has none of its own.
    public var credentials: Credentials? = nil
    /// Store cookies from responses and send them back (off by default, as in SDWebImage).
    public var handlesCookies = false
    /// Retries after transient failures.
    public var retryPolicy = RetryPolicy()
    /// May rewrite each request before it is sent, or refuse it by returning `nil`
    /// (the download fails with ``ImageDownloadError/requestRefused``). Asynchronous, unlike
    /// SDWebImage's: it may fetch a token first.
    public var requestModifier: (@Sendable (DataRequest) async throws -> DataRequest?)? = nil
    /// Sees every response head before the body is read; may change it or throw to reject it.
    public var responseModifier: (@Sendable (DataResponse) async throws -> DataResponse)? = nil
    /// Two-stage loading: resolvers asked in order whether a URL must first be looked up.
    public var resolvers: [any URLResolving] = []
    /// Time allowed for one look-up attempt; `nil`: the same as ``timeout``.
    public var lookupTimeout: Duration? = nil
    /// Which requests share one download: by default those equal in everything that can change
    /// the response (URL, headers, credentials, validators). Set at creation.
    public var sharing: DownloadSharing = .byRequest

    public enum ExecutionOrder: Sendable { case fifo, lifo }

    public init() {}

    /// `Accept` lists the formats WebImage decodes, modern ones first; and a User-Agent.
    public static let defaultHeaders: [HTTPField] = [
        HTTPField("Accept", "image/avif,image/webp,image/jxl,image/apng,image/png,image/jpeg,image/gif,image/*;q=0.8,*/*;q=0.5"),
        HTTPField("User-Agent", "WebImage/0.1 (Swift; Linux)"),
    ]
}
