import Foundation

/// Resolved image URLs of two-stage look-ups, kept while the look-up response's
/// `Cache-Control: max-age` (or `Expires`) allows — "return cached data, else load".
final class LookupCache: Sendable {
    private struct Entry {
        var imageURL: URL
        var expires: Date
    }

    private let entries = Locked<[String: Entry]>([:])
    private let limit = 1024

    func imageURL(for lookup: URL) -> URL? {
        entries.withLock { entries in
            guard let entry = entries[lookup.absoluteString] else { return nil }
            if entry.expires > Date() { return entry.imageURL }
            entries[lookup.absoluteString] = nil
            return nil
        }
    }

    func store(_ imageURL: URL, for lookup: URL, response: DataResponse) {
        guard let lifetime = Self.freshness(response), lifetime > 0 else { return }
        entries.withLock { entries in
            if entries.count >= limit { entries.removeAll() }
            entries[lookup.absoluteString] = Entry(imageURL: imageURL, expires: Date(timeIntervalSinceNow: lifetime))
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
