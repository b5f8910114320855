import Foundation

/// S3 refused a request (``S3SourceLoader``): its status and the `Code` of its XML error body.
///
/// What the server answers (``ImageServerError``): S3's `403 AccessDenied` — which S3 also
/// answers for a missing key when the credentials may not list the bucket — is `404
/// source_not_found`, so a stranger cannot tell a forbidden key from a missing one; a refused
/// signature, key or token (`SignatureDoesNotMatch`, `InvalidAccessKeyId`, `ExpiredToken`, …)
/// is the server's own misconfiguration, `502 source_error`, with S3's code in the log.
///
/// ```swift
/// S3SourceError(status: 403, code: "SignatureDoesNotMatch").answer.status   // 502
/// ```
public struct S3SourceError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    /// S3's error code (`AccessDenied`, `SignatureDoesNotMatch`), when its body had one.
    public var code: String?

    public init(status: Int, code: String?) {
        self.status = status
        self.code = code
    }

    public var description: String {
        status == 0 ? "no S3 credentials: \(code ?? "")" : "S3 answered \(status) \(code ?? "(no error code)")"
    }

    /// The server could not get credentials from the platform (status 0, the reason as the code):
    /// `502 source_error`, the reason in the log.
    public static func credentialsUnavailable(_ reason: String) -> S3SourceError {
        S3SourceError(status: 0, code: String(reason.prefix(300)))
    }

    /// S3's codes for credentials it does not accept.
    static let credentialCodes: Set<String> = [
        "SignatureDoesNotMatch", "InvalidAccessKeyId", "ExpiredToken", "InvalidToken", "TokenRefreshRequired",
        "AuthorizationHeaderMalformed", "InvalidClientTokenId", "RequestTimeTooSkewed", "MissingSecurityHeader",
    ]

    var answer: (status: Int, code: String, message: String) {
        if status == 0 { return (502, "source_error", "the server could not get its credentials for the object store") }
        if let code, Self.credentialCodes.contains(code) {
            return (502, "source_error", "the object store refused the server's credentials")
        }
        if status == 403 { return (404, "source_not_found", "no such object, or the server may not read it") }
        return (502, "source_error", "the object store answered \(status)")
    }

    /// The `<Code>` of an S3 XML error body, if any.
    static func code(inErrorBody body: [UInt8]) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let start = text.range(of: "<Code>"), let end = text.range(of: "</Code>", range: start.upperBound..<text.endIndex) else { return nil }
        let code = text[start.upperBound..<end.lowerBound]
        guard !code.isEmpty, code.count <= 64, code.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        return String(code)
    }
}
