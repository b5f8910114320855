import Foundation

/// Bytes of interrupted downloads that can be resumed with `Range` + `If-Range` (as in Nuke).
///
/// Kept only for responses that allow it (`Accept-Ranges: bytes` and an `ETag` or
/// `Last-Modified`), at most `countLimit` entries and `byteLimit` bytes, oldest dropped first.
final class ResumableDataStore: Sendable {
    struct Entry: Sendable {
        var data: Data
        /// The `If-Range` value: the strong ETag, else `Last-Modified`.
        var validator: String
        var expectedLength: Int?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
    }

    private let state = Locked(State())
    let countLimit: Int
    let byteLimit: Int

    init(countLimit: Int = 32, byteLimit: Int = 64 << 20) {
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }

    /// The entry to resume `key` from, removed from the store (a resume is attempted once).
    func take(_ key: String) -> Entry? {
        state.withLock { state in
            state.order.removeAll { $0 == key }
            return state.entries.removeValue(forKey: key)
        }
    }

    /// Keeps `data` if `response` allows resuming it; `expectedTotal` is the full body length.
    func keep(_ data: Data, for key: String, response: DataResponse, expectedTotal: Int?) {
        guard !data.isEmpty, data.count <= byteLimit,
              response.value(forHeader: "Accept-Ranges")?.lowercased().contains("bytes") == true,
              let validator = Self.validator(response)
        else { return }
        restore(Entry(data: data, validator: validator, expectedLength: expectedTotal), for: key)
    }

    /// Puts an entry back (or in) as it is.
    func restore(_ entry: Entry, for key: String) {
        state.withLock { state in
            state.order.removeAll { $0 == key }
            state.entries[key] = entry
            state.order.append(key)
            var total = state.entries.values.reduce(0) { $0 + $1.data.count }
            while state.order.count > countLimit || total > byteLimit, let oldest = state.order.first {
                state.order.removeFirst()
                total -= state.entries.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }

    /// The bytes kept now (the memory budget counts them as a cache's).
    var totalBytes: Int { state.withLock { state in state.entries.values.reduce(0) { $0 + $1.data.count } } }

    /// Drops the oldest entries until at most `bytes` are kept (the memory budget making room).
    func trim(toBytes bytes: Int) {
        state.withLock { state in
            var total = state.entries.values.reduce(0) { $0 + $1.data.count }
            while total > bytes, let oldest = state.order.first {
                state.order.removeFirst()
                total -= state.entries.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }

    /// Weak ETags cannot validate a range request; fall back to `Last-Modified`.
    static func validator(_ response: DataResponse) -> String? {
        if let etag = response.value(forHeader: "ETag"), !etag.hasPrefix("W/") { return etag }
        return response.value(forHeader: "Last-Modified")
    }
}
