public import Foundation

/// Cookies received from image servers, sent back on later requests to them.
///
/// Used by ``ImageDownloader`` when ``ImageDownloaderConfiguration/handlesCookies`` is on, for
/// every ``DataLoading`` alike. Follows RFC 6265's matching rules for domain, path, `Secure`,
/// `Max-Age` and `Expires`; host-only cookies match their host exactly. A `Domain` that is a public
/// suffix (`co.uk`, `github.io`: the Public Suffix List, as curl and browsers read it) is refused.
///
/// ```swift
/// let jar = CookieJar()
/// jar.store(setCookie: ["session=abc; Path=/"], from: url)
/// jar.cookieHeader(for: url)   // "session=abc"
/// ```
public final class CookieJar: Sendable {
    struct Cookie: Sendable {
        var name, value, domain, path: String
        var hostOnly, secure: Bool
        var expires: Date?
    }

    private let cookies = Locked<[String: Cookie]>([:])

    public init() {}

    /// Stores the cookies of `Set-Cookie` header values received from `url`.
    public func store(setCookie values: [String], from url: URL) {
        guard let host = url.host?.lowercased() else { return }
        for value in values {
            guard let cookie = Self.parse(value, host: host, requestPath: url.path) else { continue }
            let id = "\(cookie.domain)|\(cookie.path)|\(cookie.name)"
            cookies.withLock { jar in
                if let expires = cookie.expires, expires <= Date() { jar[id] = nil } else { jar[id] = cookie }
            }
        }
    }

    /// The `Cookie` header value for a request to `url`, or `nil` if no cookie matches.
    public func cookieHeader(for url: URL) -> String? {
        guard let host = url.host?.lowercased() else { return nil }
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        let now = Date()
        let matching = cookies.withLock { jar in
            jar.values.filter { cookie in
                (cookie.expires.map { $0 > now } ?? true)
                    && (!cookie.secure || secure)
                    && (cookie.hostOnly ? host == cookie.domain : Self.domainMatches(host, cookie.domain))
                    && (path == cookie.path || path.hasPrefix(cookie.path.hasSuffix("/") ? cookie.path : cookie.path + "/"))
            }
        }
        guard !matching.isEmpty else { return nil }
        return matching.sorted { $0.path.count > $1.path.count }.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// RFC 6265 § 5.1.3 domain-matching: the same host, or a host name (never an IP address:
    /// `Domain=0.0.1` from 127.0.0.1 reached 10.0.0.1) ending in `.domain`, where `domain` has
    /// at least two labels (a single label such as `com` is a public suffix; longer ones such as
    /// `co.uk` are refused when the cookie is stored, by ``PublicSuffixList``).
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        return !isAddress && domain.contains(".") && host.hasSuffix("." + domain)
    }

    /// Forgets every cookie.
    public func removeAll() { cookies.withLock { $0.removeAll() } }

    static func parse(_ header: String, host: String, requestPath: String) -> Cookie? {
        let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = parts.first, let eq = pair.firstIndex(of: "=") else { return nil }
        let name = String(pair[..<eq]).trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        let defaultPath = requestPath.lastIndex(of: "/").map { String(requestPath[..<$0]) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        var cookie = Cookie(
            name: name, value: String(pair[pair.index(after: eq)...]), domain: host, path: defaultPath,
            hostOnly: true, secure: false, expires: nil)
        for attribute in parts.dropFirst() {
            let kv = attribute.split(separator: "=", maxSplits: 1).map(String.init)
            let key = kv[0].lowercased(), value = kv.count > 1 ? kv[1] : ""
            switch key {
            case "domain":
                let domain = value.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
                guard domainMatches(host, domain) else { return nil }  // foreign domain
                // RFC 6265 § 5.3 step 5: a public suffix (`co.uk`, `github.io`) is no cookie
                // domain, or one site could set cookies for every other under it; from that
                // very host the cookie stays with the host.
                if PublicSuffixList.isPublicSuffix(domain) {
                    guard domain == host else { return nil }
                    continue
                }
                cookie.domain = domain
                cookie.hostOnly = false
            case "path" where value.hasPrefix("/"): cookie.path = value
            case "secure": cookie.secure = true
            case "max-age":
                // RFC 6265 § 5.2.2: digits with an optional `-`; zero or less expires the cookie now.
                let negative = value.hasPrefix("-")
                if let seconds = HTTPHeaderValue.deltaSeconds(negative ? String(value.dropFirst()) : value) {
                    cookie.expires = Date(timeIntervalSinceNow: negative ? -1 : Double(seconds))
                }
            case "expires" where cookie.expires == nil: cookie.expires = HTTPHeaderValue.date(value)
            default: break
            }
        }
        return cookie
    }
}

/// HTTP dates: IMF-fixdate, the obsolete RFC 850 form (2- and 4-digit years) and asctime (RFC 9110 § 5.6.7).
enum HTTPDate {
    static func parse(_ value: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: value.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }
}
