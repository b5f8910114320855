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

    /// Seconds the response may be reused, from `Cache-Control` or `Expires`.
    static func freshness(_ response: DataResponse) -> Double? {
        if let control = response.value(forHeader: "Cache-Control")?.lowercased() {
            let directives = control.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if directives.contains(where: { $0 == "no-store" || $0 == "no-cache" }) { return nil }
            for directive in directives where directive.hasPrefix("max-age=") {
                return Double(directive.dropFirst("max-age=".count))
            }
        }
        return response.value(forHeader: "Expires").flatMap(HTTPDate.parse).map { $0.timeIntervalSinceNow }
    }
}
