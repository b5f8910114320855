import CLibcrypto
package import Foundation

/// HMAC-SHA256 from the system's libcrypto (see ``SHA256`` for why not swift-crypto): the image
/// server's URL signatures and S3 request signing.
///
/// ```swift
/// let mac = HMACSHA256.code(for: Data("/img?url=…".utf8), key: key)
/// HMACSHA256.isValid(mac, for: Data("/img?url=…".utf8), key: key)  // true
/// ```
package enum HMACSHA256 {
    /// The 32-byte code of `message` under `key` (any length, empty included).
    package static func code(for message: some DataProtocol, key: some DataProtocol) -> [UInt8] {
        let key = Array(key), message = Array(message)
        var code = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        // A key is hashed first when it is longer than SHA-256's block, as the HMAC definition says,
        // so no key reaches libcrypto's `int` length: a longer one is the same HMAC as its digest.
        let usable = key.count > 64 ? SHA256.hash(key) : key
        var zero: UInt8 = 0  // libcrypto wants a pointer even for an empty key or message
        let made = withUnsafeMutablePointer(to: &zero) { empty in
            usable.withUnsafeBufferPointer { key in
                message.withUnsafeBufferPointer { message in
                    code.withUnsafeMutableBufferPointer { out in
                        HMAC(
                            EVP_sha256(), key.baseAddress ?? UnsafePointer(empty), Int32(key.count),
                            message.baseAddress ?? UnsafePointer(empty), message.count, out.baseAddress, &length)
                    }
                }
            }
        }
        precondition(made != nil && length == UInt32(SHA256.byteCount), "libcrypto cannot compute HMAC-SHA256 (out of memory, or no default provider)")
        return code
    }

    /// Whether `code` is `message`'s code under `key`, compared in constant time.
    package static func isValid(_ code: some DataProtocol, for message: some DataProtocol, key: some DataProtocol) -> Bool {
        let expected = self.code(for: message, key: key), given = Array(code)
        guard given.count == expected.count else { return false }
        return given.withUnsafeBytes { given in
            expected.withUnsafeBytes { CRYPTO_memcmp(given.baseAddress, $0.baseAddress, expected.count) == 0 }
        }
    }
}
