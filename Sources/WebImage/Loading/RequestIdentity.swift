import Foundation

/// Which parts of a request say *who* asks, so that a response fetched for one caller is never
/// shared with, or cached for, a caller who asks as someone else.
///
/// A request has an identity when it carries credentials, an `Authorization`, `Proxy-Authorization`
/// or `Cookie` header, or a header this rule declares identity-bearing — or when the pipeline's
/// downloader adds one (a cookie from its jar, a global `Authorization` header or credentials).
/// The identity is a SHA-256 digest of those parts (never the secrets themselves), and every job
/// key and cache key of the request includes it: callers share work and cached images only with
/// callers that present the same identity. A request without one keeps the plain keys (and
/// costs no hashing).
///
/// ```swift
/// var configuration = ImagePipeline.Configuration()
/// configuration.identity = .headers(["X-Api-Key"])          // also identity-bearing
/// configuration.identity = RequestIdentity { name in name.hasPrefix("x-tenant") }
/// ```
public struct RequestIdentity: Sendable {
    /// Whether a header (its name, lowercased) is identity-bearing, beyond the standard ones.
    private let isExtra: (@Sendable (String) -> Bool)?

    /// A rule that declares `isIdentityHeader` headers identity-bearing (names arrive lowercased),
    /// in addition to `Authorization`, `Proxy-Authorization` and `Cookie`.
    public init(isIdentityHeader: @escaping @Sendable (String) -> Bool) { isExtra = isIdentityHeader }

    private init() { isExtra = nil }

    /// Credentials, `Authorization`, `Proxy-Authorization` and `Cookie`.
    public static let standard = RequestIdentity()

    /// The standard parts and the headers named in `names` (case-insensitive).
    public static func headers(_ names: Set<String>) -> RequestIdentity {
        let lowered = Set(names.map { $0.lowercased() })
        return RequestIdentity { lowered.contains($0) }
    }

    static let standardHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Whether this is ``standard`` (an ``ImageRequest`` already carries the standard identity).
    var isStandard: Bool { isExtra == nil }

    /// Whether the header `name` is identity-bearing.
    public func isIdentityHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return Self.standardHeaders.contains(lowered) || isExtra?(lowered) == true
    }

    /// What the downloader adds to every request it sends: a cookie from its jar, and its global
    /// headers and credentials (only those are asked for when present).
    struct Added: Sendable {
        var cookie: String?
        var headers: [HTTPField] = []
        var credentials: Credentials?
        static let nothing = Added()
    }

    /// The identity digest of `request` plus `added`, or `nil` when neither has an
    /// identity-bearing part (then nothing is hashed).
    func digest(_ request: ImageDownloadRequest, added: Added = .nothing) -> String? {
        let own = request.headers.filter { isIdentityHeader($0.name) }
        let global = added.headers.filter { isIdentityHeader($0.name) }
        guard !own.isEmpty || !global.isEmpty || request.credentials != nil || added.credentials != nil || added.cookie != nil
        else { return nil }
        var hash = FieldDigest()
        func add(_ tag: String, _ value: String) { hash.add(tag, value) }
        add("webimage-identity", "1")
        // Sorted: the same headers in another order are the same identity.
        for field in own.map({ ($0.name.lowercased(), $0.value) }).sorted(by: { $0 < $1 }) { add("h:" + field.0, field.1) }
        if let credentials = request.credentials { add("u", credentials.user); add("p", credentials.password) }
        if let cookie = added.cookie { add("jar-cookie", cookie) }
        for field in global.map({ ($0.name.lowercased(), $0.value) }).sorted(by: { $0 < $1 }) { add("g:" + field.0, field.1) }
        if let credentials = added.credentials { add("gu", credentials.user); add("gp", credentials.password) }
        return hash.hex()
    }
}
