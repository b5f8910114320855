/// One caller's handle on a download (SDWebImage's `SDWebImageDownloadToken`, AFNetworking's
/// receipt). Cancelling it ends only this caller; the shared download stops when its last
/// caller is gone.
///
/// ```swift
/// let token = downloader.downloadToken(ImageDownloadRequest(url: url, priority: .low))
/// await token.setPriority(.veryHigh)      // the user scrolled to it
/// let result = try await token.result
/// ```
public final class DownloadToken: Sendable {
    public let request: ImageDownloadRequest
    private let task: Task<DownloadResult, any Error>
    private let changePriority: @Sendable (RequestPriority) async -> Void

    init(
        request: ImageDownloadRequest, task: Task<DownloadResult, any Error>,
        changePriority: @escaping @Sendable (RequestPriority) async -> Void
    ) {
        self.request = request
        self.task = task
        self.changePriority = changePriority
    }

    /// The downloaded data, or the error.
    public var result: DownloadResult {
        get async throws(ImageDownloadError) {
            do { return try await task.value } catch { throw ImageDownloadError(transportError: error) }
        }
    }

    /// Ends this caller with ``ImageDownloadError/cancelled``.
    public func cancel() { task.cancel() }

    /// Changes this caller's priority; a queued shared download follows its highest caller.
    public func setPriority(_ priority: RequestPriority) async { await changePriority(priority) }
}
