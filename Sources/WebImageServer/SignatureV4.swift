#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import WebImage
public import Foundation

/// AWS Signature Version 4 (header form) for one request without a body: the `Authorization`
/// value over the method, the canonical path and query, the signed headers and the payload's
/// SHA-256, with a key derived from the secret, the day, the region and the service.
///
/// The path must already be in canonical form (each byte but `A-Z a-z 0-9 - . _ ~ /` as `%XX`,
/// uppercase; S3 encodes once, as ``SourceURL`` does); header values are trimmed and their
/// inner runs of spaces folded, names lowercased and sorted, as the specification says.
///
/// ```swift
/// let signer = SignatureV4(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "…", region: "us-east-1", service: "s3")
/// let date = SignatureV4.amzDate(.now)        // 20150830T123600Z
/// let authorization = signer.authorization(method: "GET", path: "/bucket/a.jpg", query: "",
///     headers: [("host", "s3.example.com"), ("x-amz-date", date), ("x-amz-content-sha256", SignatureV4.emptyPayloadHash)],
///     payloadHash: SignatureV4.emptyPayloadHash, amzDate: date)
/// ```
public struct SignatureV4: Sendable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var region: String
    public var service: String

    /// The SHA-256 of an empty body, in hex.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public init(accessKeyID: String, secretAccessKey: String, region: String, service: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
    }

    /// `time` as `YYYYMMDD'T'HHMMSS'Z'`, in UTC.
    public static func amzDate(_ time: Date) -> String {
        var seconds = time_t(time.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// The canonical request (its SHA-256 is what is signed); `headers` are every header signed.
    public func canonicalRequest(method: String, path: String, query: String, headers: [(String, String)], payloadHash: String) -> String {
        let fields = Self.canonicalHeaders(headers)
        return [method, path, query, fields.map { "\($0.0):\($0.1)\n" }.joined(), fields.map(\.0).joined(separator: ";"), payloadHash]
            .joined(separator: "\n")
    }

    /// The `Authorization` header's value (`AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`).
    public func authorization(method: String, path: String, query: String, headers: [(String, String)], payloadHash: String, amzDate: String) -> String {
        let day = String(amzDate.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let request = canonicalRequest(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let toSign = ["AWS4-HMAC-SHA256", amzDate, scope, Hex.lowercase(SHA256.hash(Data(request.utf8)))].joined(separator: "\n")
        var key = Array("AWS4\(secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] {
            key = HMACSHA256.code(for: Array(part.utf8), key: key)
        }
        let signature = Hex.lowercase(HMACSHA256.code(for: Array(toSign.utf8), key: key))
        let signed = Self.canonicalHeaders(headers).map(\.0).joined(separator: ";")
        return "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signed), Signature=\(signature)"
    }

    /// Names lowercased, values trimmed with inner spaces folded, sorted by name.
    static func canonicalHeaders(_ headers: [(String, String)]) -> [(String, String)] {
        headers.map { name, value in
            (name.lowercased(), value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "))
        }.sorted { $0.0 < $1.0 }
    }

}
