import Foundation

/// `local:///PATH` and `s3://BUCKET/KEY` sources (issue 29), in one canonical form each, so that
/// what the allow-list checks, the caches key and the loaders open are the same path.
///
/// The path is percent-decoded once, as bytes (a file name need not be UTF-8), and re-encoded:
/// unreserved characters as they are, every other byte `%XX` with uppercase hex, `/` as the
/// separator — an encoded `%2F` is a separator too, as it would be once decoded. A `.` or `..`
/// segment, however spelled (`%2e%2E`), and a NUL byte are refused, not resolved. `local`:
/// no host (`local:///a.png`), empty segments collapsed. `s3`: the host is the bucket (S3's
/// naming rules: 3–63 of `a-z 0-9 . -`, a letter or digit at each end, no `..`), the key's
/// empty segments kept (S3 keys may hold `//`). Neither takes a user name, a port or a query;
/// a fragment is dropped. A trailing `/` is kept (an allow-list entry `local:///public/`).
///
/// ```swift
/// let file = try SourceURL(URL(string: "local:///photos/%2Fa%20b.jpg")!)
/// file.url        // local:///photos/a%20b.jpg
/// let object = try SourceURL(URL(string: "s3://My-Bucket/photos/a.jpg")!)
/// object.host     // my-bucket
/// ```
extension SourceURL {
    static let localScheme = "local"
    static let s3Scheme = "s3"

    init(scheme: String, host: String, port: Int, path: String, query: String?, url: URL) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.query = query
        self.url = url
    }

    /// A `local` or `s3` URL in its canonical form.
    static func object(scheme: String, _ components: URLComponents, given: URL) throws(Problem) -> SourceURL {
        let afterScheme = given.absoluteString.drop { $0 != ":" }.dropFirst().drop { $0 == "/" }
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil
            || afterScheme.prefix(while: { !"/?#".contains($0) }).contains("@") {
            throw .userInfo
        }
        guard components.port == nil else { throw .badPort }
        guard components.percentEncodedQuery == nil else { throw .query }
        let encodedHost = components.percentEncodedHost ?? ""
        let host: String
        if scheme == localScheme {
            guard encodedHost.isEmpty else { throw .badHost }
            host = ""
        } else {
            host = encodedHost.lowercased()
            guard isBucketName(host) else { throw .badHost }
        }
        guard let decoded = percentDecoded(components.percentEncodedPath) else { throw .badEncoding }
        guard !decoded.contains(0), decoded.isEmpty || decoded.first == 0x2F else { throw .badPath }
        var segments: [[UInt8]] = decoded.split(separator: 0x2F, omittingEmptySubsequences: false).dropFirst().map { Array($0) }
        let trailingSlash = segments.count > 1 && segments.last?.isEmpty == true
        if trailingSlash { segments.removeLast() }
        if scheme == localScheme { segments.removeAll { $0.isEmpty } }
        guard !segments.contains(where: { $0 == [0x2E] || $0 == [0x2E, 0x2E] }) else { throw .dotSegment }
        let path = "/" + segments.map(encoded).joined(separator: "/") + (trailingSlash && !segments.isEmpty ? "/" : "")
        guard let url = URL(string: "\(scheme)://\(host)\(path)") else { throw .badEncoding }
        return SourceURL(scheme: scheme, host: host, port: 0, path: path, query: nil, url: url)
    }

    /// The file-system path (`local`) or object key (`s3`, without the leading `/`) as bytes:
    /// ``path`` decoded once (it was checked and re-encoded when parsed).
    var decodedPath: [UInt8] { Self.percentDecoded(path) ?? [] }

    /// S3's bucket naming rules (virtual-host safe): 3–63 characters of `a-z 0-9 . -`, a letter
    /// or digit first and last, no `..`, not an IPv4 address.
    static func isBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func alphanumeric(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) }
        guard (3...63).contains(bytes.count), let first = bytes.first, let last = bytes.last, alphanumeric(first), alphanumeric(last),
              bytes.allSatisfy({ alphanumeric($0) || $0 == 0x2E || $0 == 0x2D }), !name.contains("..")
        else { return false }
        return IPAddress(name) == nil
    }

    /// `text` with every `%XX` decoded, as bytes; `nil` for a `%` not followed by two hex digits.
    static func percentDecoded(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25 {
                guard index + 2 < bytes.count, let high = Self.hexValue(bytes[index + 1]), let low = Self.hexValue(bytes[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// One segment: unreserved bytes as they are, any other `%XX` (uppercase) — also S3's
    /// canonical URI encoding (Signature V4).
    static func encoded(_ segment: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(segment.count)
        for b in segment {
            if (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E {
                out.append(b)
            } else {
                out += [0x25, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hexadecimal digit.
    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x41 + 10
        case 0x61...0x66: b - 0x61 + 10
        default: nil
        }
    }
}
