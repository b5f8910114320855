import Foundation
import WebImage

/// What `webimage fetch` reports at the end, as a line or as JSON.
///
/// Counts every input line that named something: `succeeded`, `failed` (loading, decoding or
/// writing failed, or the line is not an http(s) URL — those are also counted in `invalid`),
/// `skipped` (`--skip-existing`), `duplicates` (fetched once, for their first line) and
/// `cancelled` (Ctrl-C). `failures` keeps the first 1,000 failures; `--jsonl` has them all.
struct FetchSummary: Codable {
    struct Failure: Codable {
        /// The input line (`fetch`); `nil` where lines are not numbered (`prefetch`).
        var line: Int?
        var url: String
        var error: String

        init(line: Int? = nil, url: String, error: String) {
            self.line = line
            self.url = url
            self.error = error
        }

        var text: String { (line.map { "line \($0): " } ?? "") + "\(url): \(error)" }
    }

    static let keptFailures = 1000

    var requested = 0
    var succeeded = 0
    var failed = 0
    var invalid = 0
    var skipped = 0
    var duplicates = 0
    /// Images their server opted out with `X-Robots-Tag` (``OptOut``): not written, not failures.
    var optedOut = 0
    /// URLs robots.txt disallows for `webimage` (``RobotsDisallowed``): not fetched, not failures.
    var robotsDisallowed = 0
    var cancelled = 0
    var fromMemory = 0
    var fromDisk = 0
    var fromNetwork = 0
    /// Disk entries the origin confirmed unchanged (`304`); not counted in `fromDisk`.
    var revalidated = 0
    var bytes = 0
    var seconds = 0.0
    /// Ctrl-C stopped the run before the end of the list.
    var interrupted = false
    /// Failed lines whose image or sample could not be written (a full disk): `fetch` exits 1.
    var unwritten = 0
    var failures: [Failure] = []

    /// Input lines accounted for so far.
    var lines: Int { requested }

    mutating func record(_ record: FetchRecord) {
        requested += 1
        switch record.status {
        case "ok":
            succeeded += 1
            let (sum, overflow) = bytes.addingReportingOverflow(record.bytes ?? 0)
            bytes = overflow ? .max : sum  // records read back from files may claim anything
            switch record.source {
            case "memory": fromMemory += 1
            case "disk": fromDisk += 1
            case "revalidated": revalidated += 1
            default: fromNetwork += 1
            }
        case "skipped": skipped += 1
        case "duplicate": duplicates += 1
        case "cancelled": cancelled += 1
        case "opted-out": optedOut += 1
        case "robots-disallowed": robotsDisallowed += 1
        default:
            failed += 1
            if record.status == "invalid" { invalid += 1 }
            if failures.count < Self.keptFailures { failures.append(Failure(line: record.line, url: record.url, error: record.error ?? "failed")) }
        }
    }

    var imagesPerSecond: Double { seconds > 0 ? Double(succeeded) / seconds : 0 }

    var line: String {
        var text = String(
            format: "%d requested, %d succeeded, %d failed (memory %d, disk %d, revalidated %d, network %d), %@ in %.2f s, %.1f images/s",
            requested, succeeded, failed, fromMemory, fromDisk, revalidated, fromNetwork,
            ByteCountFormatter.string(fromByteCount: Int64(bytes), countStyle: .file), seconds, imagesPerSecond)
        if skipped > 0 { text += ", \(skipped) skipped (already there)" }
        if duplicates > 0 { text += ", \(duplicates) duplicate lines" }
        if unwritten > 0 { text += ", \(unwritten) not written (output errors)" }
        if optedOut > 0 { text += ", \(optedOut) opted out by their server (X-Robots-Tag)" }
        if robotsDisallowed > 0 { text += ", \(robotsDisallowed) disallowed by robots.txt" }
        if cancelled > 0 || interrupted { text += ", interrupted (\(cancelled) cancelled)" }
        return text
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
