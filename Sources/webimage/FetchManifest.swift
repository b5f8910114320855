import Foundation

/// The record of finished files in an output folder (`.webimage-fetch.jsonl`), so that
/// `--skip-existing` can resume an interrupted run: a URL is skipped when the manifest names its
/// file and the file is there with the size written. A line is added only after its file was
/// renamed into place, so a run killed at any point never vouches for a missing or partial file.
///
/// The file is opened with `O_APPEND` and each line goes out in one `write`, so two runs
/// appending to one folder's manifest never interleave inside a line.
final class FetchManifest {
    struct Line: Codable {
        var url: String
        var file: String
        var bytes: Int
    }

    static let fileName = ".webimage-fetch.jsonl"
    private let directory: URL
    private(set) var finished: [String: Line] = [:]
    private let descriptor: Int32
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

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
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    }

    /// Every file name an earlier run recorded (kept or not): reserved before anything is fetched.
    var recordedFiles: [String] { finished.values.map(\.file) }

    /// The file an earlier run finished for `url`, if it is still there with its size.
    func existing(_ url: String) -> Line? {
        guard let line = finished[url] else { return nil }
        let path = directory.appendingPathComponent(line.file).path
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == line.bytes else { return nil }
        return line
    }

    /// Appends one line in one `write` (retried only on `EINTR`; a short write to a full disk
    /// leaves a torn last line, which the reader ignores).
    func record(url: String, file: String, bytes: Int) {
        guard descriptor >= 0, var line = try? encoder.encode(Line(url: url, file: file, bytes: bytes)) else { return }
        line.append(0x0A)
        _ = line.withUnsafeBytes { buffer in
            var written: Int
            repeat { written = write(descriptor, buffer.baseAddress, buffer.count) } while written < 0 && errno == EINTR
            return written
        }
    }

    func close() { if descriptor >= 0 { _ = Foundation.close(descriptor) } }
}
