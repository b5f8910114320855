public import Foundation
public import WebImage

/// The server's `DataLoading`, one per scheme: `http` and `https` through the
/// ``GuardedDataLoader`` (address checks, redirects checked hop by hop), `local` through the
/// ``LocalSourceLoader`` and `s3` through the ``S3SourceLoader`` — each only when configured
/// (`--local-root`, `--use-s3`); any other URL is refused before it is queued.
///
/// The pipeline keys its source caches by the URL as given, so a `local:///a.jpg`, an
/// `s3://bucket/a.jpg` and an `http://…/a.jpg` are three entries, whatever the bytes.
///
/// ```swift
/// let loader = SourceLoader(web: GuardedDataLoader(), local: try LocalSourceLoader(root: "/srv/images"), s3: nil)
/// let downloader = ImageDownloader(loader: loader)
/// ```
public final class SourceLoader: DataLoading {
    public let web: GuardedDataLoader
    public let local: LocalSourceLoader?
    public let s3: S3SourceLoader?

    public init(web: GuardedDataLoader, local: LocalSourceLoader?, s3: S3SourceLoader?) {
        self.web = web
        self.local = local
        self.s3 = s3
    }

    public func canLoad(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "http", "https": url.host != nil
        case SourceURL.localScheme: local != nil
        case SourceURL.s3Scheme: s3 != nil
        default: false
        }
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        switch request.url.scheme?.lowercased() {
        case SourceURL.localScheme:
            guard let local else { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
            return try await local.loadData(for: request)
        case SourceURL.s3Scheme:
            guard let s3 else { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
            return try await s3.loadData(for: request)
        default:
            return try await web.loadData(for: request)
        }
    }
}
