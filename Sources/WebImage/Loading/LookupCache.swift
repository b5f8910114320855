import Foundation

/// Resolved image URLs of two-stage look-ups, kept while the look-up response's
/// `Cache-Control: max-age` (or `Expires`) allows — "return cached data, else load".
///
/// Keyed by ``LookupStage/cacheKey(for:)``: the look-up URL, and a digest of whatever in the
/// look-up request says who asks (the caller's headers and credentials, the jar's cookie), so a
/// URL resolved for one user is never handed to another.
final class LookupCache: Sendable {
    private struct Entry {
        var imageURL: URL
        var expires: Date
    }

    private let entries = Locked<[String: Entry]>([:])
    private let limit = 1024

    func imageURL(for key: String) -> URL? {
        entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if entry.expires > Date() { return entry.imageURL }
            entries[key] = nil
            return nil
        }
    }

    func store(_ imageURL: URL, for key: String, response: DataResponse) {
        // `Vary: *` is never reused. Other `Vary` names are honoured by the key: it holds a digest
        // of every header of the caller's that goes along, and the cache is one downloader's, whose
        // global headers every look-up sends alike.
        guard HTTPVary(response) != .any, let lifetime = Self.freshness(response), lifetime > 0 else { return }
        entries.withLock { entries in
            if entries.count >= limit { entries.removeAll() }
            entries[key] = Entry(imageURL: imageURL, expires: Date(timeIntervalSinceNow: lifetime))
        }
    }

    /// Seconds the response may be reused, from `Cache-Control` or `Expires` (range-checked:
    /// at most 2^31 s; a malformed `max-age` means "not at all").
    static func freshness(_ response: DataResponse) -> Double? {
        if let header = response.listValue(forHeader: "Cache-Control") {
            let control = CacheControl(header)
            if control.noStore || control.noCache { return nil }
            if let maxAge = control.maxAge { return Double(maxAge) }
        }
        return response.value(forHeader: "Expires").flatMap(HTTPHeaderValue.date).map {
            min($0.timeIntervalSinceNow, Double(HTTPHeaderValue.deltaSecondsLimit))
        }
    }
}
