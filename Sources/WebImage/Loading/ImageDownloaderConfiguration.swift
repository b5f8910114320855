/// Settings of an ``ImageDownloader``, with SDWebImage's defaults.
public struct ImageDownloaderConfiguration: Sendable {
    /// Downloads running at once (SDWebImage: 6).
    public var maxConcurrentDownloads: Int = 6
    /// Order among waiting downloads of equal priority.
    public var executionOrder: ExecutionOrder = .fifo
    /// Time allowed for one download (SDWebImage: 15 s).
    public var timeout: Duration = .seconds(15)
    /// Status codes accepted as success.
    public var acceptableStatusCodes: Range<Int> = 200..<300
    /// Accepted `Content-Type` values (compared without parameters); `nil` accepts any.
    public var acceptableContentTypes: Set<String>? = nil
    /// Bodies larger than this are refused: early from `Content-Length`, else while streaming.
    public var maxBodySize: Int = 50 * 1024 * 1024
    /// Headers sent with every request.
    public var headers: [HTTPField] = [
        HTTPField("Accept", "image/avif,image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8,*/*;q=0.5"),
        HTTPField("User-Agent", "WebImage/0.1 (Swift; Linux)"),
    ]

    public enum ExecutionOrder: Sendable { case fifo, lifo }

    public init() {}
}
