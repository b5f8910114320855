public import Foundation

/// A ``DataLoading`` that follows redirects itself, hop by hop, so that each hop can be checked
/// before it is requested — against robots.txt, an allow-list, a rate limit — which a loader that
/// follows them inside (``HTTPDataLoader``'s default) never shows its caller.
///
/// The loader it wraps must return a redirect as it is: ``HTTPDataLoader`` with `maxRedirects: 0`.
/// It follows `301`, `302`, `303`, `307` and `308` with a `Location`, at most `maxRedirects`
/// times, only to `http` and `https` URLs (``ImageDownloadError/invalidURL(_:)``), and never back
/// to a URL it has already requested (``ImageDownloadError/tooManyRedirects``),
/// each hop in what is left of the request's timeout. A hop to another origin (scheme, host or
/// port) is sent without `Authorization`, `Proxy-Authorization`, `Cookie` and `Origin`, as
/// browsers and curl do. The response's URL is the last hop's.
///
/// ```swift
/// let loader = RedirectFollowingLoader(base: HTTPDataLoader(maxRedirects: 0)) { next in
///     guard next.host == "images.example.com" else { throw Refused() }
/// }
/// let downloader = ImageDownloader(loader: loader)
/// ```
public final class RedirectFollowingLoader: DataLoading {
    /// The loader each hop is requested with.
    public let base: any DataLoading
    /// Redirects followed before the load fails.
    public let maxRedirects: Int
    private let check: (@Sendable (URL) async throws -> Void)?

    /// - Parameters:
    ///   - base: requests each hop and returns redirects unfollowed.
    ///   - maxRedirects: redirects followed before the load fails.
    ///   - checkingRedirect: called with every redirect's target before it is requested; an error
    ///     it throws ends the load with that error. A ``PermanentlyFailing`` error is not retried.
    public init(base: any DataLoading, maxRedirects: Int = 10, checkingRedirect: (@Sendable (URL) async throws -> Void)? = nil) {
        self.base = base
        self.maxRedirects = max(0, maxRedirects)
        self.check = checkingRedirect
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        let deadline = ContinuousClock.now + request.timeout
        var current = request
        var visited: Set<String> = [request.url.absoluteString]
        for _ in 0...maxRedirects {
            let transfer = try await base.loadData(for: current)
            guard [301, 302, 303, 307, 308].contains(transfer.response.statusCode),
                let location = transfer.response.value(forHeader: "Location"),
                let next = URL(string: location, relativeTo: current.url)?.absoluteURL
            else {
                var response = transfer.response
                response.url = current.url
                return DataTransfer(response: response, body: transfer.body)
            }
            // The redirect's body is dropped unread, which closes its connection.
            // Only to http and https: AsyncHTTPClient also speaks `http+unix`, and a hop there would
            // reach a local socket (its own redirects refuse that change of scheme too).
            guard let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw ImageDownloadError.invalidURL(next.absoluteString)
            }
            guard visited.insert(next.absoluteString).inserted else { throw ImageDownloadError.tooManyRedirects }
            try await check?(next)
            if !Self.sameOrigin(current.url, next) {
                current.headers.removeAll { Self.credentialHeaders.contains($0.name.lowercased()) }
            }
            current.url = next
            current.timeout = deadline - ContinuousClock.now
            guard current.timeout > .zero else { throw ImageDownloadError.timedOut }
        }
        throw ImageDownloadError.tooManyRedirects
    }

    /// Headers that carry a caller's identity; not sent to another origin.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "origin"]

    /// Same scheme, host and port (the scheme's default port when none is written).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && port(a) == port(b)
    }
}
