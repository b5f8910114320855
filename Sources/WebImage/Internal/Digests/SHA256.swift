import CLibcrypto
package import Foundation

/// SHA-256 from the system's libcrypto (OpenSSL 3): the digests in cache keys, cache file names
/// and ETags. swift-crypto would compile a second copy of BoringSSL beside swift-nio-ssl's (about
/// 80 s of every clean build on a 2-core machine) for this and ``HMACSHA256``.
///
/// A value: a copy goes on from where the original was, independently.
///
/// ```swift
/// var hash = SHA256()
/// hash.update(Data("webimage".utf8))
/// let hex = Hex.lowercase(hash.finalize())
/// ```
package struct SHA256 {
    /// A digest's length in bytes.
    package static let byteCount = 32
    private var context = Context()

    package init() {}

    /// Adds `bytes` to what is hashed.
    package mutating func update(_ bytes: some DataProtocol) {
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        for region in bytes.regions { region.withUnsafeBytes { context.update($0) } }
    }

    /// The digest of what was added so far; the hasher can go on.
    package func finalize() -> [UInt8] { context.copy().finish() }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some DataProtocol) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.context.finish()
    }

    /// One `EVP_MD_CTX`, owned and freed here.
    private final class Context {
        private let pointer: OpaquePointer

        init() {
            // Fails only when malloc does or when OpenSSL's configuration removed SHA-256 from its
            // providers: a broken installation, not anything a request can cause.
            guard let pointer = EVP_MD_CTX_new(), EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1 else {
                fatalError("libcrypto cannot compute SHA-256 (out of memory, or its configuration has no default provider)")
            }
            self.pointer = pointer
        }

        private init(copying other: Context) {
            guard let pointer = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(pointer, other.pointer) == 1 else {
                fatalError("libcrypto cannot copy a SHA-256 context (out of memory)")
            }
            self.pointer = pointer
        }

        deinit { EVP_MD_CTX_free(pointer) }

        func copy() -> Context { Context(copying: self) }

        func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            EVP_DigestUpdate(pointer, base, bytes.count)
        }

        /// The digest; the context is spent.
        func finish() -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
            var length: UInt32 = 0
            digest.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(pointer, $0.baseAddress, &length) }
            return digest
        }
    }
}
