public import Foundation
public import WebImage

/// `--allow-source`: which sources may be fetched, compared part by part with the parsed
/// source (``SourceURL``), never as a string prefix.
///
/// An entry is `scheme://host[:port][/path]`, `local:///path` or `s3://bucket[/prefix]`; with a
/// list, a source of a scheme no entry names is refused. A source is allowed when one entry has the same
/// scheme, the same host (an entry host `*.example.com` allows any subdomain of
/// `example.com`, not `example.com` itself), the same port (no port: the scheme's default) and a
/// path that is the entry's path or continues it after a `/` (`/images` allows `/images` and
/// `/images/a.jpg`, not `/images-private/a.jpg`; `/images/` only what is under it). Entries
/// are normalised as sources are (case, default port, trailing dot, percent-encoding, dot
/// segments). With a path other than `/`, a source path holding an encoded `/` or `\`
/// (`%2F`, `%5C`) is refused (an origin that decodes them would see another path). An empty
/// list allows every source. The server checks the source, then every redirect hop.
///
/// ```swift
/// let list = try SourceAllowList(["https://images.example.com/public/", "https://*.cdn.example.com"])
/// list.allows(try SourceURL(URL(string: "https://IMAGES.example.com:443/public/a.jpg")!))  // true
/// list.allows(try SourceURL(URL(string: "https://images.example.com/private/a.jpg")!))    // false
/// ```
public struct SourceAllowList: Sendable, Hashable {
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        public let scheme: String
        /// The host, or the parent domain when ``includesSubdomains``.
        public let host: String
        public let includesSubdomains: Bool
        public let port: Int
        public let pathPrefix: String
        public var description: String {
            port == 0 ? "\(scheme)://\(host)\(pathPrefix)" : "\(scheme)://\(includesSubdomains ? "*." : "")\(host):\(port)\(pathPrefix)"
        }

        /// Parses one `--allow-source` value.
        public init(_ text: String) throws(InvalidEntry) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let wildcard = trimmed.range(of: "://*.")
            // `*` cannot stand in a host for URL parsing: a placeholder label takes its place.
            let parsable = wildcard.map { trimmed.replacingCharacters(in: $0, with: "://wildcard.") } ?? trimmed
            // An empty port (`http://127.0.0.1:`) is refused: as a string prefix it meant "any port".
            let authority = parsable.drop { $0 != ":" }.dropFirst().drop { $0 == "/" }.prefix { !"/?#".contains($0) }
            guard !authority.hasSuffix(":"), let url = URL(string: parsable), let source = try? SourceURL(url) else { throw InvalidEntry(entry: text) }
            guard source.query == nil, url.fragment == nil else { throw InvalidEntry(entry: text) }
            scheme = source.scheme
            includesSubdomains = wildcard != nil
            // `local` and `s3` entries name no host pattern: `local:///dir/`, `s3://bucket/prefix/`.
            guard !includesSubdomains || source.port != 0 else { throw InvalidEntry(entry: text) }
            host = includesSubdomains ? String(source.host.dropFirst("wildcard.".count)) : source.host
            guard !host.isEmpty || source.scheme == SourceURL.localScheme else { throw InvalidEntry(entry: text) }
            port = source.port
            pathPrefix = source.path
        }

        func allows(_ source: SourceURL) -> Bool {
            guard source.scheme == scheme, source.port == port else { return false }
            if includesSubdomains {
                guard source.host.hasSuffix("." + host) else { return false }
            } else {
                guard source.host == host else { return false }
            }
            guard pathPrefix != "/" else { return true }
            guard !Self.mayLeave(source.path) else { return false }
            if source.path == pathPrefix { return true }
            return source.path.hasPrefix(pathPrefix.hasSuffix("/") ? pathPrefix : pathPrefix + "/")
        }

        /// Whether an origin may read `path` (normalised: `.` and `..` removed, `%2E` decoded)
        /// as another path than the one compared: an encoded `/` or `\`, or one encoded twice
        /// (`%252F`), a double-encoded or full-width dot (`%252E`, `．` U+FF0E, `․` U+2024), a
        /// literal `\`, or a `.` or `..` segment with path parameters (`..;/`, which Tomcat,
        /// Jetty and Spring resolve as `..`; red team, stop 53).
        static func mayLeave(_ path: String) -> Bool {
            let upper = path.uppercased()
            for spelling in ["%2F", "%5C", "%252F", "%255C", "%252E", "%EF%BC%8E", "%E2%80%A4", "\\"] where upper.contains(spelling) {
                return true
            }
            return path.split(separator: "/").contains { segment in
                let name = segment.prefix { $0 != ";" }
                return name == "." || name == ".."
            }
        }
    }

    /// An `--allow-source` value that is not `http(s)://host[:port][/path]`, `local:///path` or `s3://bucket[/prefix]`.
    public struct InvalidEntry: Error, Sendable, Hashable, CustomStringConvertible {
        public var entry: String
        public var description: String {
            "'\(entry)' is not an allowed source: give scheme://host[:port][/path] (http or https, no user name, query or fragment; a leading *. in the host allows its subdomains), local:///path or s3://bucket[/prefix]"
        }
    }

    public let entries: [Entry]

    public init(_ entries: [String]) throws(InvalidEntry) {
        var parsed: [Entry] = []
        for entry in entries { parsed.append(try Entry(entry)) }
        self.entries = parsed
    }

    private init(parsed: [Entry]) { entries = parsed }

    /// The empty list: every source is allowed.
    public static let everySource = SourceAllowList(parsed: [])

    /// No entries: every source is allowed.
    public var allowsEverything: Bool { entries.isEmpty }

    public func allows(_ source: SourceURL) -> Bool {
        entries.isEmpty || entries.contains { $0.allows(source) }
    }
}

/// A fetch stopped because the source, or a redirect hop, is not allowed (not on
/// `--allow-source`, or a URL with a user name or password).
public struct SourceRefusal: Error, PermanentlyFailing, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
