import Foundation

/// What `webimage prefetch` reports at the end, as a line or as JSON.
struct PrefetchSummary: Encodable {
    var requested: Int
    var finished = 0
    /// Failed: invalid URLs, and images the pipeline could not load (or that were not images).
    var skipped = 0
    var seconds = 0.0
    var failures: [FetchSummary.Failure] = []

    init(requested: Int) { self.requested = requested }

    var line: String {
        String(format: "%d requested, %d finished, %d skipped in %.2f s", requested, finished, skipped, seconds)
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
