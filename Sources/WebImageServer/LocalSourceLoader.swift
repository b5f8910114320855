#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
public import Foundation
import NIOPosix
public import WebImage

/// `local:///PATH` sources: regular files under one root directory (`--local-root`, imgproxy's
/// `IMGPROXY_LOCAL_FILESYSTEM_ROOT`).
///
/// The root is opened once, at start. A path (``SourceURL``: decoded once, no `.` or `..`
/// segment, no NUL) is walked from it one segment at a time with `openat` and `O_NOFOLLOW`, each
/// directory opened from the one before: no name is resolved twice, so nothing swapped in
/// between a check and an open (a symbolic link, a renamed directory) can lead outside the
/// root. Symbolic links are not followed at all, inside the root or out. The last segment must
/// be a regular file (`fstat` on the open descriptor: no FIFO, device or directory), no larger
/// than the body limit — refused from its size before a byte is read — and is read in chunks of
/// at most what `fstat` reported, on NIO's blocking-I/O pool, never the cooperative threads.
///
/// The answer says `Cache-Control: no-store`, which keeps local files out of the source caches:
/// reading a file again costs less than keeping a copy, and a changed file is read at once
/// (`ResultCaching` still shares their renders; the result cache's key names the path).
///
/// ```swift
/// let files = try LocalSourceLoader(root: "/srv/images")
/// let transfer = try await files.loadData(for: DataRequest(url: URL(string: "local:///a.jpg")!, maxBodySize: 10 << 20))
/// ```
public final class LocalSourceLoader: Sendable {
    /// The root directory, open for the loader's lifetime.
    private let root: Descriptor
    /// Bytes read at once.
    static let chunkSize = 1 << 20

    /// Opens `root`; throws when it is not a directory that can be opened.
    public init(root: String) throws(LocalSourceError) {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw LocalSourceError(.badRoot, path: root, errno: errno) }
        self.root = Descriptor(fd)
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        let source: SourceURL
        do throws(SourceURL.Problem) { source = try SourceURL(request.url) } catch { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
        guard source.scheme == SourceURL.localScheme else { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
        let segments = source.decodedPath.split(separator: 0x2F).map(Array.init)
        let root = self.root
        let (file, size) = try await NIOThreadPool.singleton.runIfActive { try Self.walk(segments, from: root) }
        if let limit = request.maxBodySize, size > limit {
            throw ImageDownloadError.tooLarge(limit: limit, declared: size)
        }
        let headers = [HTTPField("Content-Length", String(size)), HTTPField("Cache-Control", "no-store")]
        let response = DataResponse(url: source.url, statusCode: 200, headers: headers)
        return DataTransfer(response: response, body: DataBody(FileChunks(file: file, size: size)) { $0 })
    }

    /// Walks `segments` from `root` without following a link; the last must be a regular file.
    static func walk(_ segments: [[UInt8]], from root: Descriptor) throws -> (Descriptor, Int) {
        guard let last = segments.last else { throw LocalSourceError(.notRegularFile, path: "/", errno: 0) }
        var directory = root
        var walked = ""
        for segment in segments.dropLast() {
            walked += "/" + String(decoding: segment, as: UTF8.self)
            let fd = openat(directory.fd, segment.cString, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                let failure = errno
                // O_DIRECTORY | O_NOFOLLOW on a link fails with ENOTDIR: say that it is a link.
                var info = stat()
                if fstatat(directory.fd, segment.cString, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
                    throw LocalSourceError(.symbolicLink, path: walked, errno: 0)
                }
                throw LocalSourceError(opening: walked, errno: failure)
            }
            directory = Descriptor(fd)
        }
        walked += "/" + String(decoding: last, as: UTF8.self)
        // O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused just after).
        let fd = openat(directory.fd, last.cString, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw LocalSourceError(opening: walked, errno: errno) }
        let file = Descriptor(fd)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw LocalSourceError(.unreadable, path: walked, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0, let size = Int(exactly: info.st_size) else {
            throw LocalSourceError(.notRegularFile, path: walked, errno: 0)
        }
        return (file, size)
    }
}

/// An open file descriptor, closed when the last reference goes.
final class Descriptor: Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}

/// A file's first `size` bytes in chunks, read with `pread` on NIO's blocking-I/O pool. A file
/// that shrinks ends early (the downloader then refuses the short body).
struct FileChunks: AsyncSequence, Sendable {
    let file: Descriptor
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: Descriptor
        let size: Int
        var offset = 0

        mutating func next() async throws -> Data? {
            guard offset < size else { return nil }
            let count = Swift.min(LocalSourceLoader.chunkSize, size - offset)
            let start = offset, file = self.file
            let chunk = try await NIOThreadPool.singleton.runIfActive { () throws -> Data in
                var data = Data(count: count)
                let read = data.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress, count, off_t(start)) }
                guard read >= 0 else { throw LocalSourceError(.unreadable, path: "", errno: errno) }
                data.removeSubrange(read..<count)
                return data
            }
            guard !chunk.isEmpty else { return nil }
            offset += chunk.count
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(file: file, size: size) }
}

extension Array where Element == UInt8 {
    /// The bytes with a terminating NUL, for a C call (the path was checked to hold none).
    var cString: [CChar] { map { CChar(bitPattern: $0) } + [0] }
}
