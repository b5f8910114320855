import Foundation

/// A SHA-256 digest of tagged values, each length-prefixed, so that no choice of values can make
/// two different lists hash alike. The keys that must tell requests apart (identity, download
/// sharing, data jobs) are made with it, and never keep the secrets they cover.
struct FieldDigest {
    private var hash = SHA256()

    mutating func add(_ tag: String, _ value: String) {
        for part in [tag, value] {
            hash.update(Data("\(part.utf8.count):".utf8))
            hash.update(Data(part.utf8))
        }
    }

    /// The digest in lowercase hex.
    func hex() -> String { Hex.lowercase(hash.finalize()) }
}
