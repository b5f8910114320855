import Foundation

/// Decides which downloads are the same request and may share one network transfer.
///
/// Two callers share a download only when their requests have the same sharing key. The
/// standard key (``byRequest``) is made of everything that can change the response: the URL, every
/// header the caller sets (`Authorization`, `Cookie`, `Accept`, `Range`, custom headers), the
/// credentials and the cache validators. So a caller without credentials never receives bytes
/// fetched with another caller's, and a plain request never receives another's `304`. The
/// downloader's own settings (global headers, credentials) are the same for all its callers;
/// changing them while downloads run starts a new sharing generation.
///
/// Per-caller settings are not part of the key: priority, progress interval, partial data and
/// the timeout (a joining caller with a shorter timeout gets its own deadline).
///
/// The request modifier (``ImageDownloaderConfiguration/requestModifier``) runs before every
/// attempt, not before sharing: it is one function for every caller of the downloader, so two
/// requests with the same key are also the same after it. A modifier that answers differently
/// per caller must make the callers' requests differ (a header), or use ``never``.
///
/// ```swift
/// var configuration = ImageDownloaderConfiguration()
/// configuration.sharing = .byRequest(ignoringHeaders: ["X-Request-ID"])  // tracing headers differ per call
/// configuration.sharing = .never                                         // every request downloads alone
/// configuration.sharing = DownloadSharing { request in request.url.absoluteString }  // URL only (unsafe with credentials)
/// ```
public struct DownloadSharing: Sendable {
    /// The key of `request`; `nil` means "never share this one".
    public let key: @Sendable (ImageDownloadRequest) -> String?

    public init(key: @escaping @Sendable (ImageDownloadRequest) -> String?) {
        self.key = key
    }

    /// Shares requests that are the same in every part that can change the response.
    public static let byRequest = byRequest(ignoringHeaders: [])

    /// Like ``byRequest``, but headers named in `ignored` (case-insensitive) do not count: for
    /// headers that differ per call without changing the answer (request IDs, trace context).
    public static func byRequest(ignoringHeaders ignored: Set<String>) -> DownloadSharing {
        let ignored = Set(ignored.map { $0.lowercased() })
        return DownloadSharing { request in standardKey(request, ignoring: ignored) }
    }

    /// Every request downloads alone.
    public static let never = DownloadSharing { _ in nil }

    /// The URL alone when nothing else is set (the common case costs no hashing); otherwise the
    /// URL and a SHA-256 digest of the rest, so that secrets are never kept in the key itself.
    static func standardKey(_ request: ImageDownloadRequest, ignoring ignored: Set<String>) -> String {
        // The URL too: an identity names who asks or what is the same about two requests of
        // one URL, never that two URLs are one (a user id set for every request once made
        // downloads of different URLs share one transfer, and the second URL cached the first's bytes).
        if let identity = request.identity { return "id:" + identity + "\u{0}" + request.url.absoluteString }
        let url = request.url.absoluteString
        let headers = ignored.isEmpty ? request.headers : request.headers.filter { !ignored.contains($0.name.lowercased()) }
        guard !headers.isEmpty || request.credentials != nil || request.validators != nil else { return url }
        var digest = FieldDigest()
        for field in headers { digest.add("h:" + field.name.lowercased(), field.value) }
        if let credentials = request.credentials { digest.add("u", credentials.user); digest.add("p", credentials.password) }
        if let validators = request.validators {
            digest.add("etag", validators.etag ?? "-")
            digest.add("lm", validators.lastModified ?? "-")
        }
        return url + " #" + digest.hex()
    }
}
