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
