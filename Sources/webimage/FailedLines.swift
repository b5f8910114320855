import Foundation

/// `fetch --retry-failed RUN.jsonl`: the lines an earlier run's `--jsonl` recorded as `failed`,
/// read one line at a time (``LineReader``: at most 512 KB of a line is held (``maxRecordLength``); a longer one, or one
/// that is no record, is skipped), each with its line number in that run. `invalid` lines are not
/// retried (they would fail the same way), nor `opted-out`, `robots-disallowed`, `duplicate`,
/// `skipped` or `cancelled` ones (`--skip-existing` resumes an interrupted run). A failed line of
/// a webdataset run also carries its sample's `key`, `caption` and saved `columns`, so that the
/// retried sample is the one the first run would have written.
///
/// ```swift
/// let failed = try FailedLines(path: "run.jsonl")
/// while let (line, url, fields) = failed.next() { print(line, url, fields.caption ?? "") }
/// ```
final class FailedLines {
    private struct Record: Decodable {
        var line: Int
        var url: String
        var status: String
        var key: String?
        var caption: String?
        var columns: [String: String]?
    }

    /// A record holds a caption and columns besides the URL, each up to a 64 KB input line,
    /// escaped: room for all of them.
    static let maxRecordLength = 8 * LineReader.maxLineLength

    private let reader: LineReader
    private let decoder = JSONDecoder()

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(path): no such file or not readable") }
        reader = LineReader(handle: handle, maxLineLength: Self.maxRecordLength)
    }

    /// The next failed line of the earlier run: its line number there, its URL and its sample's fields.
    func next() -> (line: Int, url: String, fields: SampleFields)? {
        while let text = reader.nextLine() {
            guard let record = try? decoder.decode(Record.self, from: Data(text.utf8)), record.status == "failed" else { continue }
            let fields = SampleFields(caption: record.caption, saved: record.columns ?? [:], recordedKey: record.key.flatMap(WebDatasetWriter.safeKey))
            return (record.line, record.url, fields)
        }
        return nil
    }
}
