public import Foundation
internal import Logging
internal import Metrics

/// Downloads image data: queueing, validation and size limits over a ``DataLoading``.
///
/// SDWebImage's `SDWebImageDownloader` and AFNetworking's `AFImageDownloader`: a bounded
/// number of downloads run at once, the rest wait by priority in FIFO or LIFO order; responses
/// are checked for status, content type and size before they are accepted.
///
/// ```swift
/// let downloader = ImageDownloader()
/// let result = try await downloader.download(URL(string: "https://example.com/a.jpg")!)
/// print(result.data.count, result.response.statusCode)
/// ```
public final class ImageDownloader: Sendable {
    public let configuration: ImageDownloaderConfiguration
    public let loader: any DataLoading
    private let queue: DownloadQueue
    private let logger = Logger(label: "webimage.downloader")

    public init(loader: any DataLoading = HTTPDataLoader(), configuration: ImageDownloaderConfiguration = .init()) {
        self.loader = loader
        self.configuration = configuration
        queue = DownloadQueue(
            maxConcurrent: configuration.maxConcurrentDownloads,
            order: configuration.executionOrder == .fifo ? .fifo : .lifo)
    }

    /// Downloads reported so far: running now.
    public var activeDownloads: Int { get async { await queue.running } }

    /// Changes the concurrency limit while running.
    public func setMaxConcurrentDownloads(_ value: Int) async { await queue.setMaxConcurrent(value) }

    /// Downloads `url`, returning the whole validated body.
    /// - Throws: ``ImageDownloadError``.
    public func download(
        _ url: URL, priority: RequestPriority = .normal, headers: [HTTPField] = []
    ) async throws(ImageDownloadError) -> DownloadResult {
        guard let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw .invalidURL(url.absoluteString)
        }
        do {
            try await queue.acquire(priority: priority)
        } catch {
            throw .cancelled
        }
        let started = ContinuousClock.now
        Counter(label: "webimage_downloads_started_total").increment()
        logger.debug("download started", metadata: ["url": "\(url)"])
        do {
            let result = try await perform(url, headers: headers)
            await queue.release()
            Counter(label: "webimage_downloads_succeeded_total").increment()
            Counter(label: "webimage_download_bytes_total").increment(by: result.data.count)
            Metrics.Timer(label: "webimage_download_duration_seconds").recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            logger.debug("download finished", metadata: ["url": "\(url)", "bytes": "\(result.data.count)"])
            return result
        } catch {
            await queue.release()
            let failure = ImageDownloadError(transportError: error)
            Counter(label: "webimage_downloads_failed_total", dimensions: [("reason", failure.metricReason)]).increment()
            logger.debug("download failed", metadata: ["url": "\(url)", "error": "\(failure)"])
            throw failure
        }
    }

    private func perform(_ url: URL, headers: [HTTPField]) async throws -> DownloadResult {
        let request = DataRequest(url: url, headers: configuration.headers + headers, timeout: configuration.timeout)
        let transfer = try await loader.loadData(for: request)
        let response = transfer.response
        if response.statusCode == 304 { throw ImageDownloadError.notModified(response) }
        guard configuration.acceptableStatusCodes.contains(response.statusCode) else {
            throw ImageDownloadError.badStatusCode(response.statusCode)
        }
        if let acceptable = configuration.acceptableContentTypes {
            let type = response.value(forHeader: "Content-Type")?
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard acceptable.contains(type) else { throw ImageDownloadError.badContentType(type) }
        }
        let limit = configuration.maxBodySize
        if let declared = response.expectedContentLength, declared > limit {
            throw ImageDownloadError.tooLarge(limit: limit, declared: declared)
        }
        var data = Data()
        data.reserveCapacity(min(response.expectedContentLength ?? 64 * 1024, limit))
        for try await chunk in transfer.body {
            guard data.count + chunk.count <= limit else { throw ImageDownloadError.tooLarge(limit: limit, declared: nil) }
            data.append(chunk)
        }
        try Task.checkCancellation()
        if let declared = response.expectedContentLength, declared != data.count {
            throw ImageDownloadError.transport(underlying: BodyLengthMismatch(declared: declared, received: data.count))
        }
        guard !data.isEmpty else { throw ImageDownloadError.emptyBody }
        return DownloadResult(data: data, response: response)
    }
}

/// A completed download.
public struct DownloadResult: Sendable {
    public var data: Data
    public var response: DataResponse
}

/// The body ended before (or after) the length the server declared.
public struct BodyLengthMismatch: Error, Sendable, CustomStringConvertible {
    public var declared: Int
    public var received: Int
    public var description: String { "body ended after \(received) of \(declared) declared bytes" }
}

extension ImageDownloadError {
    var metricReason: String {
        switch self {
        case .invalidURL: "invalid_url"
        case .badStatusCode: "status"
        case .badContentType: "content_type"
        case .emptyBody: "empty"
        case .tooLarge: "too_large"
        case .timedOut: "timeout"
        case .tooManyRedirects: "redirects"
        case .cancelled: "cancelled"
        case .notModified: "not_modified"
        case .transport: "transport"
        case .resolverFailed: "resolver"
        }
    }
}
