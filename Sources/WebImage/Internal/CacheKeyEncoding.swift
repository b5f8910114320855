/// How the pipeline's keys are spelled, so that no URL, cache key filter, override or processor
/// identifier can make one request's key equal to another's.
///
/// A key is `base [US identity] [RS variant]`, and a job key may start with `flags FS`:
/// - the separators are the ASCII control characters FS, RS and US (`\u{1C}`, `\u{1E}`,
///   `\u{1F}`), which a `URL`'s `absoluteString` never holds (Foundation percent-encodes them);
/// - a base that holds one of them anyway (an explicit cache key, a filter's result) is escaped
///   (``escaped(_:)``), so the separators in a key are always the pipeline's own;
/// - the identity is a fixed-length hex digest (``RequestIdentity``);
/// - in the variant, each processor identifier is length-prefixed, so identifiers cannot run
///   into each other or into the options around them.
///
/// A plain URL's key is its `absoluteString` unchanged: a URL with a `#fragment` is just that,
/// and cannot name another request's variant (the old separator was `#`).
enum CacheKeyEncoding {
    /// Between a job's option flags and its data key.
    static let flagsSeparator: Character = "\u{1C}"
    /// Starts an escaped base (see ``escaped(_:)``).
    static let escape: Character = "\u{1D}"
    /// Between the data key and the variant (decoding options, processors).
    static let variantSeparator: Character = "\u{1E}"
    /// Between the base and the identity digest.
    static let identitySeparator: Character = "\u{1F}"

    private static func isReserved(_ scalar: Unicode.Scalar) -> Bool { (0x1C...0x1F).contains(scalar.value) }

    /// `base` itself when it holds no reserved character (every URL); otherwise ESC followed by
    /// `base` with each reserved character written as ESC and a letter. Injective: the two
    /// forms cannot meet (only the second starts with ESC), and the escaping is reversible.
    static func escaped(_ base: String) -> String {
        guard base.unicodeScalars.contains(where: isReserved) else { return base }
        var result = String(escape)
        for scalar in base.unicodeScalars {
            if isReserved(scalar) {
                result.append(escape)
                result.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "a") + UInt8(scalar.value - 0x1C)))
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The data key: the escaped base, and the identity digest if the request has one.
    static func dataKey(base: String, identity: String?) -> String {
        let escaped = escaped(base)
        guard let identity else { return escaped }
        return escaped + String(identitySeparator) + identity
    }

    /// A memory key for an image of a response that varied: `key`, the variant separator, and
    /// `vary=` with a fixed-length digest of the names and values (``HTTPVary``) it was for.
    /// No variant's suffix starts so: processor lists are length-prefixed, options are letters.
    static func varied(_ key: String, digest: String) -> String { key + String(variantSeparator) + "vary=" + digest }

    /// `key` followed by the variant separator and `variant`.
    static func variant(_ key: String, _ variant: String) -> String { key + String(variantSeparator) + variant }

    /// Processor identifiers as one unambiguous list: `length:identifier` each.
    static func processorList(_ identifiers: [String]) -> String {
        var list = ""
        for identifier in identifiers { list += "\(identifier.utf8.count):" + identifier }
        return list
    }
}
