import Foundation

/// The record of finished files in an output folder (`.webimage-fetch.jsonl`), so that
/// `--skip-existing` can resume an interrupted run: a URL is skipped when the manifest names its
/// file and the file is there with the size written. A line is added only after its file was
/// renamed into place, so a run killed at any point never vouches for a missing or partial file.
final class FetchManifest {
    struct Line: Codable {
        var url: String
        var file: String
        var bytes: Int
    }

    static let fileName = ".webimage-fetch.jsonl"
    private let directory: URL
    private(set) var finished: [String: Line] = [:]
    private let writer: JSONLinesWriter?

    /// Reads what earlier runs finished (when `resume` is set) and opens the manifest for appending.
    init(directory: URL, resume: Bool) {
        self.directory = directory
        let path = directory.appendingPathComponent(Self.fileName).path
        if resume, let handle = FileHandle(forReadingAtPath: path) {
            let reader = LineReader(handle: handle)
            let decoder = JSONDecoder()
            while let text = reader.nextLine() {
                // A torn last line (the run was killed mid-write) is ignored.
                if let line = try? decoder.decode(Line.self, from: Data(text.utf8)) { finished[line.url] = line }
            }
            try? handle.close()
        }
        writer = try? JSONLinesWriter(appendingTo: path, truncate: false)
    }

    /// The file an earlier run finished for `url`, if it is still there with its size.
    func existing(_ url: String) -> Line? {
        guard let line = finished[url] else { return nil }
        let path = directory.appendingPathComponent(line.file).path
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == line.bytes else { return nil }
        return line
    }

    func record(url: String, file: String, bytes: Int) {
        try? writer?.write(Line(url: url, file: file, bytes: bytes))
    }

    func close() { writer?.close() }
}

extension JSONLinesWriter {
    /// Opens `path` for appending (creating it), or empties it first with `truncate`.
    convenience init(appendingTo path: String, truncate: Bool) throws {
        if truncate || !FileManager.default.fileExists(atPath: path) {
            try self.init(path: path)
        } else {
            guard let handle = FileHandle(forWritingAtPath: path) else { throw CLIError("cannot write \(path)") }
            handle.seekToEndOfFile()
            self.init(handle: handle)
        }
    }
}
