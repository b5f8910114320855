import Foundation
import WebImage

/// What `webimage fetch` reports at the end, as a line or as JSON.
struct FetchSummary: Codable {
    struct Failure: Codable {
        var url: String
        var error: String
    }

    var requested = 0
    var succeeded = 0
    var failed = 0
    var fromMemory = 0
    var fromDisk = 0
    var fromNetwork = 0
    /// Disk entries the origin confirmed unchanged (`304`); not counted in `fromDisk`.
    var revalidated = 0
    var bytes = 0
    var seconds = 0.0
    var failures: [Failure] = []

    mutating func record(_ fetched: FetchedImage) {
        succeeded += 1
        bytes += fetched.data.count
        if fetched.revalidated { revalidated += 1; return }
        switch fetched.source {
        case .memory: fromMemory += 1
        case .disk: fromDisk += 1
        case .network: fromNetwork += 1
        }
    }

    mutating func record(failure url: String, _ error: String) {
        failed += 1
        failures.append(Failure(url: url, error: error))
    }

    var imagesPerSecond: Double { seconds > 0 ? Double(succeeded) / seconds : 0 }

    var line: String {
        String(
            format: "%d requested, %d succeeded, %d failed (memory %d, disk %d, revalidated %d, network %d), %@ in %.2f s, %.1f images/s",
            requested, succeeded, failed, fromMemory, fromDisk, revalidated, fromNetwork,
            ByteCountFormatter.string(fromByteCount: Int64(bytes), countStyle: .file), seconds, imagesPerSecond)
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
