public import Foundation
import WebImage

/// Signs and verifies `/img` URLs: `s` is the unpadded base64url HMAC-SHA256 of the path and
/// query before `&s=`, under any of the configured keys (several keys allow rotation).
///
/// ```swift
/// let signer = URLSigner(keys: [Data("secret".utf8)])
/// let path = signer.sign("/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=256")
/// // "/img?url=…&w=256&s=…"
/// signer.verify(path)   // true
/// ```
public struct URLSigner: Sendable {
    public let keys: [Data]

    public init(keys: [Data]) { self.keys = keys }

    /// Signatures are checked only when there is at least one key.
    public var isEnabled: Bool { !keys.isEmpty }

    /// `pathAndQuery` with `&s=SIGNATURE` appended, signed with the first key.
    public func sign(_ pathAndQuery: String) -> String {
        guard let key = keys.first else { return pathAndQuery }
        return pathAndQuery + "&s=" + Self.signature(of: pathAndQuery, key: key)
    }

    /// Whether `pathAndQuery` ends in `&s=SIGNATURE` and the signature is valid under any key.
    public func verify(_ pathAndQuery: String) -> Bool {
        guard let marker = pathAndQuery.range(of: "&s=", options: .backwards) else { return false }
        let signed = String(pathAndQuery[..<marker.lowerBound])
        guard let mac = Self.decode(String(pathAndQuery[marker.upperBound...])) else { return false }
        let message = Data(signed.utf8)
        return keys.contains { key in
            HMACSHA256.isValid(mac, for: message, key: key)
        }
    }

    /// The unpadded base64url HMAC-SHA256 of `message`.
    public static func signature(of message: String, key: Data) -> String {
        let mac = HMACSHA256.code(for: Data(message.utf8), key: key)
        return Data(mac).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The MAC of a signature written exactly as ``signature(of:key:)`` writes it: unpadded
    /// base64url whose unused low bits are zero. Other spellings of the same bytes (a `=`, other
    /// final bits) are refused, so one signed URL has one spelling and one cache key (five
    /// spellings verified before; red team, stop 53).
    private static func decode(_ text: String) -> Data? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        let canonical = data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return canonical == text ? data : nil
    }
}
