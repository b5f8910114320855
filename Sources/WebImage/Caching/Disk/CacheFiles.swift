import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a disk cache: `files/` holds one file per entry version, `.incoming/` the
/// temporary files of writes in progress.
///
/// A file's name is the key's hash plus a random generation (`<16 hex>-<16 hex>`), so two
/// processes storing the same key never write the same file, and the index row names exactly
/// the file its checksum belongs to.
struct CacheFiles: Sendable {
    let root: URL
    let files: URL
    let incoming: URL
    /// The folders' paths as strings: `URL.appendingPathComponent` costs a `stat` per call
    /// (measured: 8 % of a store), so file paths are joined as strings.
    private let filesPath: String
    private let incomingPath: String

    init(root: URL) {
        self.root = root
        files = root.appendingPathComponent("files", isDirectory: true)
        incoming = root.appendingPathComponent(".incoming", isDirectory: true)
        filesPath = files.path
        incomingPath = incoming.path
    }

    /// The root and `.incoming/`, and `files/` unless `indexed` is false (it is made by the
    /// first write).
    /// `files/` and `.incoming/` must be folders of their own, never symbolic links: the cache
    /// deletes what it finds there, and through a link it would delete another folder's files
    /// (the root itself may be a link: the user chose where it points).
    func createDirectories(indexed: Bool = true) throws(DiskCacheError) {
        for url in indexed ? [root, files, incoming] : [root, incoming] {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            } catch {
                throw .cannotCreateDirectory(path: url.path, reason: Self.reason(error))
            }
        }
        for url in [files, incoming] {
            var info = stat()
            guard lstat(url.path, &info) == 0 else { continue }  // `files/` is made by the first write
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .cannotCreateDirectory(
                    path: url.path, reason: "it is a symbolic link or a file, not a folder of the cache's own; the cache never deletes through it")
            }
        }
    }

    /// Whether `name` is one the cache gives an entry's file (``newName(for:)``): only such
    /// files are ever deleted from `files/`, so a folder given as a cache by mistake keeps the
    /// files that are not the cache's.
    static func isEntryName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count == 33, bytes[16] == UInt8(ascii: "-") else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index == 16 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        }
    }

    /// Whether `name` is one ``write(_:name:sync:directFrom:)`` gives a temporary file (a UUID).
    static func isTemporaryName(_ name: String) -> Bool {
        name.utf8.count == 36 && UUID(uuidString: name) != nil
    }

    /// A new file name for `key`.
    static func newName(for key: String) -> String {
        let prefix = SHA256.hash(Data(key.utf8)).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return hex16(prefix) + "-" + hex16(UInt64.random(in: .min ... .max))
    }

    /// 16 lower-case hex digits (String(format:) goes through CoreFoundation's formatter).
    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    func path(of name: String) -> String { filesPath + "/" + name }

    /// Writes `data` to a temporary file, optionally `fsync`s it, and renames it to `name`:
    /// the name appears only for complete (and, with `sync`, durable) bytes. Entries of
    /// `directFrom` bytes or more go past the page cache where the file system allows it
    /// (``DirectWrite``).
    func write(_ data: Data, name: String, sync: Bool, directFrom: Int? = nil) throws(DiskCacheError) {
        let temporary = incomingPath + "/" + UUID().uuidString
        let descriptor: Int32
        var failure: String?
        if let directFrom, data.count >= directFrom, let direct = try writeDirect(data, to: temporary) {
            descriptor = direct
        } else {
            descriptor = try openNew(temporary)
            failure = data.withUnsafeBytes { buffer -> String? in
                var offset = 0
                while offset < buffer.count {
                    let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return Self.errnoReason()
                    }
                    offset += written
                }
                return nil
            }
        }
        if failure == nil && sync && fsync(descriptor) != 0 { failure = Self.errnoReason() }
        if close(descriptor) != 0 && failure == nil { failure = Self.errnoReason() }
        if failure == nil && rename(temporary, path(of: name)) != 0 {
            // `files/` is made by the first write (or was removed under us): make it, once.
            if errno == ENOENT, (try? createDirectories()) != nil, rename(temporary, path(of: name)) == 0 {
                return
            }
            failure = Self.errnoReason()
        }
        if let failure {
            unlink(temporary)
            throw .writeFailed(path: temporary, reason: failure)
        }
    }

    /// Opens the new file `path` for writing, making the folders again if they were removed
    /// under us.
    private func openNew(_ path: String) throws(DiskCacheError) -> Int32 {
        var descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 && errno == ENOENT {
            try createDirectories()
            descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else { throw .writeFailed(path: path, reason: Self.errnoReason()) }
        return descriptor
    }

    /// `data` written to the new file `path` past the page cache: its open descriptor, or nil
    /// when the file system does not do direct I/O (nothing is left behind then).
    private func writeDirect(_ data: Data, to path: String) throws(DiskCacheError) -> Int32? {
        var result = data.withUnsafeBytes { DirectWrite.write($0, to: path) }
        if case .failure(let error) = result, error.errno == ENOENT {
            try createDirectories()
            result = data.withUnsafeBytes { DirectWrite.write($0, to: path) }
        }
        switch result {
        case .success(let descriptor): return descriptor
        case .failure(let error): throw .writeFailed(path: path, reason: error.reason)
        case nil: return nil
        }
    }

    enum ReadResult {
        case bytes(Data)
        case missing
        case failed(String)
    }

    /// The whole file `name`, read with one `open` and `read` calls into an unzeroed buffer.
    /// With `expectedSize` (the index's), no `fstat`: it reads up to one byte more, so a file of
    /// another length still reads as another length (a longer one as `expectedSize + 1` bytes).
    func read(_ name: String, expectedSize: Int? = nil) -> ReadResult {
        // A name from a damaged or hostile index (`../../etc/passwd`) is never opened.
        guard Self.isEntryName(name) else { return .failed("\(name.debugDescription) is not a cache file name") }
        let descriptor = open(path(of: name), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return errno == ENOENT ? .missing : .failed(Self.errnoReason()) }
        defer { close(descriptor) }
        let capacity: Int, byIndex: Bool
        if let expectedSize, expectedSize >= 0, case (let withOneMore, false) = expectedSize.addingReportingOverflow(1) {
            (capacity, byIndex) = (withOneMore, true)
        } else {  // none, or one no file has (a damaged row): the file's own size
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return .failed(Self.errnoReason()) }
            (capacity, byIndex) = (Int(info.st_size), false)
        }
        guard let buffer = malloc(max(capacity, 1)) else { return .failed("out of memory") }
        var offset = 0
        while offset < capacity {
            let count = systemRead(descriptor, buffer + offset, capacity - offset)
            if count < 0 {
                if errno == EINTR { continue }
                let reason = Self.errnoReason()
                free(buffer)
                return .failed(reason)
            }
            offset += count
            // A regular file's read returns less than asked only at its end.
            if count == 0 || (byIndex && offset == capacity - 1) { break }
        }
        return .bytes(Data(bytesNoCopy: buffer, count: offset, deallocator: .free))
    }

    /// Deletes the entry file `name`; a name the cache does not give (from a damaged index)
    /// deletes nothing.
    func remove(_ name: String) {
        guard Self.isEntryName(name) else { return }
        unlink(path(of: name))
    }

    /// Names of the regular files in `folder` (not links, not folders) whose last change is
    /// older than `age` seconds.
    func names(in folder: URL, olderThan age: TimeInterval, now: Date) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.filter { name in
            var info = stat()
            guard lstat(folder.appendingPathComponent(name).path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
            return now.timeIntervalSince1970 - modificationSeconds(info) > age
        }
    }

    static func errnoReason() -> String { String(cString: strerror(errno)) }

    static func reason(_ error: any Error) -> String {
        (error as NSError).localizedDescription
    }
}

// `write`/`read` are also CacheFiles' method names, hence these wrappers.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

private func systemRead(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, bytes, count)
}

private func modificationSeconds(_ info: stat) -> Double {
    #if canImport(Darwin)
    Double(info.st_mtimespec.tv_sec)
    #else
    Double(info.st_mtim.tv_sec)
    #endif
}
