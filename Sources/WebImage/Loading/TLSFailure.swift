import Foundation

/// A TLS failure reported by libcurl (an untrusted, expired or mismatched certificate, a failed
/// handshake): permanent, not worth a retry.
package struct TLSFailure: Error, CustomStringConvertible, Sendable {
    package let description: String

    /// FoundationNetworking maps libcurl's TLS errors to `NSURLErrorUnknown` with libcurl's
    /// message, so the message is what tells them apart.
    package init?(_ error: any Error) {
        let nsError = error as NSError
        let message = nsError.userInfo[NSLocalizedDescriptionKey] as? String ?? "\(error)"
        let tlsCodes: Set<URLError.Code> = [
            .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
            .clientCertificateRejected, .clientCertificateRequired,
        ]
        guard nsError.domain == NSURLErrorDomain, let code = URLError.Code(rawValue: nsError.code),
              tlsCodes.contains(code) || code == .unknown && ["SSL", "TLS", "certificate"].contains(where: message.contains)
        else { return nil }
        description = message
    }
}
