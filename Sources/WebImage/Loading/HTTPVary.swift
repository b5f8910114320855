import Foundation

/// `Vary` (RFC 9111 § 4.1): a response stored for one request serves another only when the
/// headers it names have the same values in both.
///
/// The disk cache keeps those values beside the entry (``CacheMetadata/vary``) and a look-up
/// with other values is a miss (the new response then replaces the entry: one entry per key).
/// `Vary: *` is never stored. `Accept-Encoding` is left out: a content coding changes how the
/// body travels, not the image the pipeline receives.
///
/// ```swift
/// let sent = [HTTPField("Accept", "image/webp")]
/// if case .headers(let names) = HTTPVary(response) { metadata.vary = HTTPVary.values(of: names, in: sent) }
/// HTTPVary.matches(metadata.vary, sent)   // true
/// ```
public enum HTTPVary: Sendable, Equatable {
    /// No `Vary` (or one naming only `Accept-Encoding`).
    case none
    /// `Vary: *`: no later request can be shown to match; not stored.
    case any
    /// The named request headers, lowercased, sorted, without duplicates.
    case headers([String])

    /// What `response`'s `Vary` fields (all of them, as one list) say.
    public init(_ response: DataResponse) {
        guard let list = response.listValue(forHeader: "Vary") else { self = .none; return }
        var names = Set<String>()
        for part in list.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "*" { self = .any; return }
            if !name.isEmpty, name != "accept-encoding" { names.insert(name) }
        }
        self = names.isEmpty ? .none : .headers(names.sorted())
    }

    /// The values of `names` in `headers`, as ``CacheMetadata/vary`` keeps them: `name:value`
    /// lines (repeated fields joined with `, `), or `name` alone for an absent header.
    public static func values(of names: [String], in headers: [HTTPField]) -> String {
        var lines: [String] = []
        for name in names {
            let values = headers.filter { $0.name.lowercased() == name }.map { $0.value.trimmingCharacters(in: .whitespaces) }
            lines.append(values.isEmpty ? name : name + ":" + values.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    /// Whether a request sending `headers` may use an entry stored with `stored` (``CacheMetadata/vary``).
    public static func matches(_ stored: String?, _ headers: [HTTPField]) -> Bool {
        guard let stored else { return true }
        return values(of: names(in: stored), in: headers) == stored
    }

    /// The header names a value stored as ``CacheMetadata/vary`` was made of.
    public static func names(in stored: String) -> [String] {
        // A name is a token: it holds no `:` and no line break, so the names read back exactly.
        stored.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.prefix { $0 != ":" }) }
    }
}
