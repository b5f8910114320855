import Foundation

/// One line of `fetch --jsonl FILE`: what happened to one input line.
///
/// `status` is `ok`, `skipped` (`--skip-existing` found the file), `failed`, `invalid` (not an
/// http(s) URL), `duplicate` (the URL of an earlier line: fetched once) or `cancelled` (Ctrl-C).
/// `source` is `network`, `disk`, `memory` or `revalidated` (a `304` confirmed the disk copy).
/// `status` may also be `opted-out` (`X-Robots-Tag`) or `robots-disallowed` (robots.txt).
/// `finalURL` is where redirects led (only when the image came from the network through one).
/// A `failed` line of a webdataset run also has `key`, `caption` and `columns` (``FailedLines``).
struct FetchRecord: Codable, Sendable {
    var line: Int
    var url: String
    var status: String
    var file: String?
    var format: String?
    var width: Int?
    var height: Int?
    var bytes: Int?
    var ms: Double?
    var source: String?
    var finalURL: String?
    var error: String?
    /// Seconds from the start of the run to this outcome (so `report merge` can chart shards
    /// that ran side by side); absent in records written before it existed.
    var at: Double?
    /// A `failed` line of a webdataset run: its sample's key, caption and `--save-cols` values,
    /// for `--retry-failed` to write the same sample again.
    var key: String?
    var caption: String?
    var columns: [String: String]?
}

extension FetchRecord {
    /// The largest byte count a record may claim (1 PB): more is no image's, and summing such
    /// values must not overflow.
    static let maxBytes = 1 << 50
    /// The longest run a record may claim (ten years, in seconds).
    static let maxSeconds = 10.0 * 365 * 86_400

    /// This record as read from a `--jsonl` file, which anyone may have written (a shard from
    /// another machine, a hand-edited file): numbers outside what a run can produce are dropped
    /// (`nil`), and a `file` that is not a plain relative path inside the run's folder (absolute,
    /// or with a `..` or empty segment) is dropped too, so a report never reads outside it.
    func checkedAfterReading() -> FetchRecord {
        var record = self
        if let bytes, !(0...Self.maxBytes).contains(bytes) { record.bytes = nil }
        if let at, !(at.isFinite && (0...Self.maxSeconds).contains(at)) { record.at = nil }
        if let ms, !(ms.isFinite && ms >= 0 && ms <= Self.maxSeconds * 1000) { record.ms = nil }
        if let width, !(0...(1 << 24)).contains(width) { record.width = nil }
        if let height, !(0...(1 << 24)).contains(height) { record.height = nil }
        if let file {
            let segments = file.split(separator: "/", omittingEmptySubsequences: false)
            if file.hasPrefix("/") || file.contains("\0") || segments.contains(where: { $0.isEmpty || $0 == ".." || $0 == "." }) {
                record.file = nil
            }
        }
        return record
    }
}

/// Writes ``FetchRecord``s as JSON lines, each as it comes (so a killed run keeps what it did).
final class JSONLinesWriter {
    private let handle: FileHandle
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Creates (or empties) the file at `path`.
    convenience init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CLIError("cannot write \(path)")
        }
        self.init(handle: handle)
    }

    init(handle: FileHandle) { self.handle = handle }

    func write(_ record: some Encodable) throws {
        var line = try encoder.encode(record)
        line.append(0x0A)
        try handle.write(contentsOf: line)
    }

    func close() { try? handle.close() }
}
