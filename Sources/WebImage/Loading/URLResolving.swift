public import Foundation

/// Two-stage loading: some URLs first answer with the real image URL.
///
/// A resolver *claims* the URLs it knows how to resolve. For those, the downloader first fetches
/// a look-up request at low priority, reads the image URL from the response, then downloads the
/// image at high priority. The image keeps the original URL as its identity (cache and
/// coalescing key). Look-up responses are reused while their `Cache-Control: max-age` allows.
///
/// ```swift
/// var configuration = ImageDownloaderConfiguration()
/// configuration.resolvers = [LookupResolver { $0.path.hasPrefix("/avatar-url/") }]
/// ```
public protocol URLResolving: Sendable {
    /// Whether `url` must be resolved by this resolver.
    func claims(_ url: URL) -> Bool
    /// The look-up request for `url` (default: GET `url` itself).
    func lookupRequest(for url: URL) -> DataRequest
    /// Reads the image URL from the look-up response.
    func imageURL(from response: DataResponse, body: Data, for url: URL) throws -> URL
}

extension URLResolving {
    public func lookupRequest(for url: URL) -> DataRequest {
        DataRequest(url: url, headers: [HTTPField("Accept", "text/plain, application/json;q=0.9, */*;q=0.5")])
    }
}

/// A resolver for look-ups whose body is the image URL as plain text (relative URLs resolve
/// against the look-up URL), or whose answer a custom parser reads.
///
/// ```swift
/// // JSON: {"url": "https://cdn.example.com/a.jpg"}
/// let resolver = LookupResolver(claims: { $0.host == "api.example.com" }) { response, body, _ in
///     let object = try JSONDecoder().decode([String: String].self, from: body)
///     return URL(string: object["url"] ?? "")
/// }
/// ```
public struct LookupResolver: URLResolving {
    public typealias Parser = @Sendable (DataResponse, Data, URL) throws -> URL?

    private let claimsURL: @Sendable (URL) -> Bool
    private let parser: Parser?

    public init(claims: @escaping @Sendable (URL) -> Bool, parser: Parser? = nil) {
        self.claimsURL = claims
        self.parser = parser
    }

    public func claims(_ url: URL) -> Bool { claimsURL(url) }

    public func imageURL(from response: DataResponse, body: Data, for url: URL) throws -> URL {
        if let parser {
            guard let resolved = try parser(response, body, url) else {
                throw ImageDownloadError.resolverFailed("the look-up answer names no image URL")
            }
            return resolved
        }
        let text = String(decoding: body.prefix(8192), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, !text.contains(where: \.isWhitespace), let resolved = URL(string: text, relativeTo: response.url)?.absoluteURL,
              let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw ImageDownloadError.resolverFailed("the look-up body is not a URL: \(text.prefix(80))")
        }
        return resolved
    }
}
