import Foundation

/// Writes output files so that a final name only ever holds a complete file and no file already
/// in the folder is ever replaced: the bytes go to a hidden temporary file in the same folder
/// (``stage(_:in:name:)``), which is renamed into place only if its name is free (``place(_:in:as:)``,
/// ``NoReplaceRename``); the caller takes the next suffix when it is not. On any error (a full
/// disk, a file size limit, a folder that became unwritable) the temporary file is removed and
/// the error names the file and the cause ("No space left on device"). Temporary files a killed
/// run left are removed by the next run (``removeStaleTemporaries(in:prefix:)``).
enum OutputFile {
    /// The marker in a temporary file's name: `.NAME.partial-PID-RANDOM`.
    static let temporaryMarker = ".partial-"

    /// Writes `data` to a new hidden temporary file for `name`; returns its path.
    static func stage(_ data: Data, in directory: URL, name: String) throws -> String {
        let temporary = temporaryPath(for: name, in: directory)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(name) }
        var failed: CLIError?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failed = failure(name)
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0, failed == nil { failed = failure(name) }
        if let failed {
            unlink(temporary)
            throw failed
        }
        return temporary
    }

    /// A new hidden temporary path for `name` in `directory` (this process's id in it, so a later
    /// run can tell whether its writer is gone).
    static func temporaryPath(for name: String, in directory: URL) -> String {
        directory.appendingPathComponent(".\(name)\(temporaryMarker)\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    }

    /// Renames the staged file to `name` if no file has that name: `false` (the staged file kept)
    /// when one has. Any other failure removes the staged file and throws.
    static func place(_ temporary: String, in directory: URL, as name: String) throws -> Bool {
        do {
            return try NoReplaceRename.move(temporary, to: directory.appendingPathComponent(name).path) == .moved
        } catch {
            unlink(temporary)
            throw CLIError("cannot write \(name): \(error)")
        }
    }

    /// Removes a staged file that will not be placed.
    static func discard(_ temporary: String) { unlink(temporary) }

    /// Removes the temporary files of runs that are gone (killed): those whose process id is no
    /// longer a running process. Another run's files, still being written, are left alone.
    /// With `prefix`, only names that start with it (in a folder others share, like /tmp).
    static func removeStaleTemporaries(in directory: URL, prefix: String = ".") {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let marker = name.range(of: temporaryMarker, options: .backwards),
                  let pid = name[marker.upperBound...].split(separator: "-").first.flatMap({ Int32($0) }), pid > 0 else { continue }
            if pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH { continue }
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    /// Fails early, before any download, when the folder cannot take files.
    static func checkWritable(_ directory: URL) throws {
        guard access(directory.path, W_OK | X_OK) == 0 else {
            throw CLIError("the output directory \(directory.path) is not writable: \(String(cString: strerror(errno)))")
        }
    }

    /// Creates the output folder (and its parents), with the system's reason when it cannot.
    static func makeDirectory(_ directory: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CLIError("cannot create the output directory \(directory.path): a file has that name") }
            return
        }
        let parent = directory.deletingLastPathComponent()
        if parent.path != directory.path { try makeDirectory(parent) }
        guard mkdir(directory.path, 0o755) == 0 || errno == EEXIST else {
            throw CLIError("cannot create the output directory \(directory.path): \(String(cString: strerror(errno)))")
        }
    }

    private static func failure(_ name: String) -> CLIError {
        CLIError("cannot write \(name): \(String(cString: strerror(errno)))")
    }
}
