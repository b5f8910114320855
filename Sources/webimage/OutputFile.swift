import Foundation

/// Writes one output file so that its final name only ever holds a complete file: the bytes go
/// to a hidden temporary file in the same folder, which is renamed into place; on any error
/// (a full disk, a file size limit, a folder that became unwritable) the temporary file is
/// removed and the error names the file and the cause ("No space left on device").
enum OutputFile {
    static func write(_ data: Data, to directory: URL, name: String) throws {
        let temporary = directory.appendingPathComponent(".\(name).partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
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
        if failed == nil, rename(temporary, directory.appendingPathComponent(name).path) != 0 { failed = failure(name) }
        if let failed {
            unlink(temporary)
            throw failed
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
