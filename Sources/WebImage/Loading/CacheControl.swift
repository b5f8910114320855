import Foundation

/// The directives of `Cache-Control` (all its fields, as one list) that matter to an image cache.
struct CacheControl: Equatable {
    var noStore = false
    var noCache = false
    /// Seconds, at most 2^31; the first `max-age` counts (RFC 9111 § 4.2.1).
    var maxAge: Int?
    /// `s-maxage`: a shared cache's lifetime (a private cache ignores it); the first counts.
    var sharedMaxAge: Int?
    var isPrivate = false
    var isPublic = false
    var mustRevalidate = false

    /// A lifetime directive's seconds, range-checked by ``HTTPHeaderValue/deltaSeconds(_:)``; 0 when malformed.
    private static func lifetime(_ parts: [String]) -> Int {
        let value = parts.count == 2 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
        return HTTPHeaderValue.deltaSeconds(value) ?? 0
    }

    init(_ header: String?) {
        guard let header else { return }
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "private": isPrivate = true  // with or without a field list: the whole response
            case "public": isPublic = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            // A malformed lifetime (`-1`, `1e300`, `inf`) is treated as stale (RFC 9111 § 4.2.1).
            case "max-age" where maxAge == nil: maxAge = Self.lifetime(parts)
            case "s-maxage" where sharedMaxAge == nil: sharedMaxAge = Self.lifetime(parts)
            default: break
            }
        }
    }
}
