public import Foundation

/// A source URL in the one form the server compares with `--allow-source`, keys its caches by
/// and fetches — so that what was checked is what is fetched.
///
/// Normalised (RFC 3986 § 6.2.2): scheme and host lowercased; one trailing dot of the host
/// removed; the default port (80, 443) made explicit in ``port`` and left out of ``url``;
/// percent-encoding with uppercase hex digits, unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// decoded; `.` and `..` path segments removed; the fragment dropped. Internationalised host
/// names are already punycode (`xn--…`): Foundation's `URL` applies IDNA when it parses. A URL
/// with a user name or password (`http://allowed@other/`) is refused: it is the classic way to
/// make a URL look like another host's.
///
/// ```swift
/// let source = try SourceURL(URL(string: "HTTP://Images.Example.com.:80/a/../b/%7Ex.jpg")!)
/// source.url    // http://images.example.com/b/~x.jpg
/// source.port   // 80
/// ```
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
    /// `http`, `https`, `local` or `s3` (`SourceURL+Objects.swift`).
    public let scheme: String
    /// Lowercase, without a trailing dot; an IPv6 address without brackets. An `s3` URL's
    /// bucket; empty for `local`.
    public let host: String
    /// 0 for `local` and `s3`.
    public let port: Int
    /// Starts with `/`.
    public let path: String
    public let query: String?
    /// The normalised URL, fetched in place of the one given.
    public let url: URL

    public var description: String { url.absoluteString }

    /// Why a URL cannot be a source.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        case notHTTP, userInfo, badHost, badPort, badEncoding, dotSegment, badPath, query
        public var description: String {
            switch self {
            case .notHTTP: "the URL is not an absolute http, https, local or s3 URL"
            case .dotSegment: "the path has a '.' or '..' segment"
            case .badPath: "the path is not absolute or holds a NUL byte"
            case .query: "local and s3 URLs take no query"
            case .userInfo: "the URL contains a user name or password"
            case .badHost: "the URL's host is not a valid host name or address (local URLs have none: local:///path; s3 URLs name a bucket)"
            case .badPort: "the URL's port is not from 1 to 65535"
            case .badEncoding: "the URL is not validly percent-encoded, or its path or query encodes bytes that are not UTF-8"
            }
        }
    }

    public init(_ given: URL) throws(Problem) {
        guard let components = URLComponents(url: given, resolvingAgainstBaseURL: true), let scheme = components.scheme?.lowercased() else {
            throw .notHTTP
        }
        if scheme == Self.localScheme || scheme == Self.s3Scheme {
            self = try Self.object(scheme: scheme, components, given: given)
            return
        }
        guard scheme == "http" || scheme == "https" else { throw .notHTTP }
        // `@` anywhere in the authority, even with an empty user (`http://@host/`).
        let afterScheme = given.absoluteString.drop { $0 != ":" }.dropFirst().drop { $0 == "/" }
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil
            || afterScheme.prefix(while: { !"/?#".contains($0) }).contains("@") {
            throw .userInfo
        }
        self.scheme = scheme
        // `encodedHost` is the IDNA (punycode) form of an internationalised name.
        host = try Self.host(components.encodedHost ?? components.percentEncodedHost ?? "")
        let defaultPort = scheme == "https" ? 443 : 80
        port = components.port ?? defaultPort
        guard (1...65535).contains(port) else { throw .badPort }
        // A path or query that decodes to bytes other than UTF-8 (`%FF`) is refused: the HTTP
        // client builds its request target from Foundation's decoded path, which is empty for
        // those, so `/allowed/%FF/x.jpg` went to the origin as `/` (red team, stop 53).
        guard let path = Self.normalisedEncoding(components.percentEncodedPath), path.removingPercentEncoding != nil else { throw .badEncoding }
        self.path = path.isEmpty ? "/" : Self.removingDotSegments(path)
        if let encoded = components.percentEncodedQuery {
            guard let normalised = Self.normalisedEncoding(encoded), normalised.removingPercentEncoding != nil else { throw .badEncoding }
            query = normalised
        } else {
            query = nil
        }
        let authority = (host.contains(":") ? "[\(host)]" : host) + (port == defaultPort ? "" : ":\(port)")
        guard let url = URL(string: "\(scheme)://\(authority)\(self.path)" + (query.map { "?" + $0 } ?? "")) else { throw .badEncoding }
        self.url = url
    }

    /// The host, percent-decoded and lowercased, without one trailing dot; letters, digits, `-`,
    /// `_` and `.` only, or an IPv6 address in brackets.
    static func host(_ encoded: String) throws(Problem) -> String {
        guard var host = encoded.removingPercentEncoding?.lowercased() else { throw .badHost }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), let address = IPAddress(String(host.dropFirst().dropLast())), address.bytes.count == 16 else {
                throw .badHost
            }
            return address.description
        }
        if host.hasSuffix(".") { host.removeLast() }
        guard !host.isEmpty, !host.hasPrefix("."), !host.contains(".."),
              host.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F })
        else { throw .badHost }
        return host
    }

    /// Percent-encoding with uppercase hex, unreserved characters decoded, anything else that is
    /// not printable ASCII encoded; `nil` for a `%` not followed by two hex digits.
    static func normalisedEncoding(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let hex = Array("0123456789ABCDEF".utf8)
        func isUnreserved(_ b: UInt8) -> Bool {
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
        }
        func encode(_ b: UInt8) { out += [0x25, hex[Int(b >> 4)], hex[Int(b & 0xF)]] }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x25 {
                guard index + 2 < bytes.count, let high = Self.hexValue(bytes[index + 1]), let low = Self.hexValue(bytes[index + 2]) else { return nil }
                let decoded = high << 4 | low
                if isUnreserved(decoded) { out.append(decoded) } else { encode(decoded) }
                index += 3
            } else {
                if byte <= 0x20 || byte >= 0x7F { encode(byte) } else { out.append(byte) }
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 § 5.2.4 for a path that starts with `/`.
    static func removingDotSegments(_ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var output: [Substring] = []
        for (offset, segment) in segments.enumerated() {
            let isLast = offset == segments.count - 1
            switch segment {
            case ".": if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default: output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}
