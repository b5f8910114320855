import Foundation
import WebImage

/// The record of finished files in an output folder (`.webimage-fetch.jsonl`), so that
/// `--skip-existing` can resume an interrupted run: a URL is skipped when the manifest names its
/// file and the file is there with the size written. A line is added only after its file was
/// renamed into place, so a run killed at any point never vouches for a missing or partial file.
///
/// The file is opened with `O_APPEND` and each line goes out in one `write`, so two runs
/// appending to one folder's manifest never interleave inside a line.
///
/// With `resume`, what earlier runs recorded is streamed into a ``ManifestIndex`` at the start (a
/// temporary SQLite file in the folder, `.webimage-fetch-index.sqlite.partial-PID-…`, removed by
/// ``close()`` or, after a kill, by the next run's ``OutputFile/removeStaleTemporaries(in:prefix:)``;
/// in the system's temporary folder when the output folder cannot take it, swept the same way),
/// so the memory taken does not grow with the manifest.
final class FetchManifest {
    struct Line: Codable {
        var url: String
        var file: String
        var bytes: Int
    }

    static let fileName = ".webimage-fetch.jsonl"
    /// Lines added to the index in one transaction.
    static let batch = 10_000
    private let directory: URL
    /// What earlier runs recorded (with `resume`, when the folder has a manifest).
    let index: ManifestIndex?
    private let descriptor: Int32
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Indexes what earlier runs finished (when `resume` is set) and opens the manifest for appending.
    init(directory: URL, resume: Bool) throws {
        self.directory = directory
        let path = directory.appendingPathComponent(Self.fileName).path
        if resume, let reading = try Self.openRegular(path, O_RDONLY) {
            index = try Self.indexed(FileHandle(fileDescriptor: reading, closeOnDealloc: true), directory: directory)
        } else {
            index = nil
        }
        descriptor = try Self.openRegular(path, O_WRONLY | O_CREAT | O_APPEND, mode: 0o644) ?? -1
    }

    /// `path` opened with `flags`, only as a regular file of its own: not through a symbolic
    /// link (someone who can plant one in a shared output folder made a run append list text to
    /// `~/.bashrc`), and not a FIFO or a device (a FIFO hung the run at start; red team, stop 53).
    /// `nil` when it does not exist (and `flags` do not create it).
    static func openRegular(_ path: String, _ flags: Int32, mode: mode_t = 0) throws -> Int32? {
        let descriptor = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw CLIError("cannot open \(fileName) in the output folder: \(errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            _ = Foundation.close(descriptor)
            throw CLIError("\(fileName) in the output folder is not a regular file")
        }
        // Back to blocking writes and reads: O_NONBLOCK was for the open of a FIFO only.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    /// Streams the manifest into a new index, `batch` lines at a time.
    private static func indexed(_ handle: FileHandle, directory: URL) throws -> ManifestIndex {
        defer { try? handle.close() }
        let index = try ManifestIndex.create(near: directory)
        do {
            let reader = LineReader(handle: handle)
            let decoder = JSONDecoder()
            var rows: [ManifestIndex.Row] = []
            rows.reserveCapacity(batch)
            while let text = reader.nextLine() {
                // A torn last line (the run was killed mid-write) is ignored.
                guard let line = try? decoder.decode(Line.self, from: Data(text.utf8)) else { continue }
                rows.append(ManifestIndex.Row(url: line.url, file: line.file, bytes: line.bytes))
                if rows.count == batch {
                    try index.insert(rows)
                    rows.removeAll(keepingCapacity: true)
                }
            }
            try index.insert(rows)
            return index
        } catch {
            index.remove()
            throw CLIError("cannot index \(fileName) for --skip-existing: \(error)")
        }
    }

    /// The file an earlier run finished for `url`, if it is still there with its size.
    func existing(_ url: String) -> Line? {
        guard let row = index?.entry(for: url) else { return nil }
        let path = directory.appendingPathComponent(row.file).path
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == row.bytes else { return nil }
        return Line(url: url, file: row.file, bytes: row.bytes)
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

    /// Closes the manifest and removes the index.
    func close() {
        if descriptor >= 0 { _ = Foundation.close(descriptor) }
        index?.remove()
    }
}

extension ManifestIndex {
    /// A new index in the output folder (where the images go, so there is room; a hidden
    /// temporary name a later run cleans up), else in the system's temporary folder (where every
    /// run removes the indexes of killed runs: ``removeStaleIndexes()``).
    static func create(near directory: URL) throws -> ManifestIndex {
        let temporary = FileManager.default.temporaryDirectory
        do {
            return try ManifestIndex(path: OutputFile.temporaryPath(for: fileName, in: directory))
        } catch {
            return try ManifestIndex(path: OutputFile.temporaryPath(for: fileName, in: temporary))
        }
    }

    private static let fileName = "webimage-fetch-index.sqlite"

    /// Removes the indexes killed runs left in the system's temporary folder: only files of this
    /// name whose run is gone (the folder is shared with every other program).
    static func removeStaleIndexes() {
        OutputFile.removeStaleTemporaries(
            in: FileManager.default.temporaryDirectory, prefix: ".\(fileName)\(OutputFile.temporaryMarker)")
    }
}
