import Foundation

/// `fetch --retry-failed RUN.jsonl`: the lines an earlier run's `--jsonl` recorded as `failed`,
/// read one line at a time (``LineReader``: at most 64 KB of a line is held; a longer one, or one
/// that is no record, is skipped), each with its line number in that run. `invalid` lines are not
/// retried (they would fail the same way), nor `opted-out`, `robots-disallowed`, `duplicate`,
/// `skipped` or `cancelled` ones (`--skip-existing` resumes an interrupted run).
///
/// ```swift
/// let failed = try FailedLines(path: "run.jsonl")
/// while let (line, url) = failed.next() { print(line, url) }
/// ```
final class FailedLines {
    private struct Record: Decodable {
        var line: Int
        var url: String
        var status: String
    }

    private let reader: LineReader
    private let decoder = JSONDecoder()

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(path): no such file or not readable") }
        reader = LineReader(handle: handle)
    }

    /// The next failed line of the earlier run: its line number there and its URL.
    func next() -> (line: Int, url: String)? {
        while let text = reader.nextLine() {
            guard let record = try? decoder.decode(Record.self, from: Data(text.utf8)), record.status == "failed" else { continue }
            return (record.line, record.url)
        }
        return nil
    }
}
