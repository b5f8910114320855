import Foundation

/// The first stage of two-stage loading: fetch the look-up URL and read the real
/// image URL from its answer, reusing answers while their caching headers allow.
///
/// A look-up is a request like any other: it goes through ``DownloadOperation/send`` (cookies,
/// request and response modifiers, credentials on a `401`), and the operation's attempt loop
/// gives it the retry policy and its own timeout (``ImageDownloaderConfiguration/lookupTimeout``).
/// A 5xx, 429 or timeout is transient (retried, never remembered); a 404/410 or an answer that
/// names no URL is permanent. The caller holds a queue slot (taken at low priority) while this runs.
struct LookupStage {
    let operation: DownloadOperation
    private var context: DownloadContext { operation.context }

    /// Look-up answers are small; a larger one is refused while it streams.
    static let maxAnswerSize = 256 * 1024

    /// Headers of the caller's that do not go along with the look-up: they describe the image.
    static let imageOnlyHeaders: Set<String> = ["accept", "range", "if-range", "if-none-match", "if-modified-since"]

    /// The look-up cache's key for `url`: the URL alone when the look-up carries nothing of the
    /// caller's (no headers of its own, no credentials, no cookie from the jar); else the URL and
    /// a SHA-256 digest of those — conservatively every header of the caller's, since the
    /// downloader cannot tell which of them say who asks.
    func cacheKey(for url: URL) -> String {
        let own = operation.request.headers.filter { !Self.imageOnlyHeaders.contains($0.name.lowercased()) }
        let credentials = operation.request.credentials ?? context.configuration.credentials
        let cookie = context.configuration.handlesCookies ? context.cookies.cookieHeader(for: url) : nil
        let identity = RequestIdentity { _ in true }  // every header counts
        let digest = identity.digest(
            ImageDownloadRequest(url: url, headers: own, credentials: credentials), added: .init(cookie: cookie))
        return CacheKeyEncoding.dataKey(base: url.absoluteString, identity: digest)
    }

    /// The image URL for `url` if a fresh look-up answer is kept for this caller's identity.
    func cachedImageURL(for url: URL) -> URL? {
        guard let cached = context.lookups.imageURL(for: cacheKey(for: url)) else { return nil }
        context.metrics.lookupReuses.increment()
        return cached
    }

    /// One look-up attempt.
    func resolve(_ url: URL, with resolver: any URLResolving, timeout: Duration) async throws -> URL {
        let base = resolver.lookupRequest(for: url)
        // The caller's own headers (tokens, say) go along; those that describe the image do not.
        let key = cacheKey(for: url)  // before sending: a cookie the answer sets is not in it
        let own = base.headers + operation.request.headers.filter { !Self.imageOnlyHeaders.contains($0.name.lowercased()) }
        let headers = DownloadOperation.merge(context.configuration.headers, own)
        let transfer = try await operation.send(base.url, headers: headers, timeout: timeout, maxBodySize: Self.maxAnswerSize)
        let response = transfer.response
        guard (200..<300).contains(response.statusCode) else {
            throw AttemptFailure(.lookupFailed(.badStatusCode(response.statusCode)), retryAfter: response.value(forHeader: "Retry-After"))
        }
        var body = Data()
        do {
            for try await chunk in transfer.body {
                body.append(chunk)
                guard body.count <= Self.maxAnswerSize else {
                    throw AttemptFailure(.lookupFailed(.tooLarge(limit: Self.maxAnswerSize, declared: nil)))
                }
            }
        } catch let failure as AttemptFailure {
            throw failure
        } catch {
            throw AttemptFailure(.lookupFailed(ImageDownloadError(transportError: error)))
        }
        let imageURL: URL
        do {
            imageURL = try resolver.imageURL(from: response, body: body, for: url)
        } catch let error as ImageDownloadError {
            throw AttemptFailure(error)
        } catch {
            throw AttemptFailure(.resolverFailed("\(error)"))
        }
        context.lookups.store(imageURL, for: key, response: response)
        context.logger.debug("look-up resolved", metadata: ["url": "\(url)", "image": "\(imageURL)"])
        return imageURL
    }
}
