#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Why a `local://` source cannot be read (``LocalSourceLoader``). The server answers 404
/// `source_not_found` for a missing file and 403 `source_not_allowed` for the rest
/// (``ImageServerError``); `description`, with the path under the root and `errno`, goes to the
/// log only.
///
/// ```swift
/// do { _ = try await files.loadData(for: request) } catch let error as LocalSourceError { print(error.reason) }
/// ```
public struct LocalSourceError: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// `--local-root` is not a directory that can be opened.
        case badRoot
        /// No such file (or a file where a directory was expected).
        case notFound
        /// A segment of the path is a symbolic link: links are not followed.
        case symbolicLink
        /// A directory, FIFO, device or socket.
        case notRegularFile
        /// Permission denied, or another error of the file system.
        case unreadable
    }

    public var reason: Reason
    /// The path under the root (or the root itself, for ``Reason/badRoot``).
    public var path: String
    public var errno: Int32

    init(_ reason: Reason, path: String, errno: Int32) {
        self.reason = reason
        self.path = path
        self.errno = errno
    }

    /// An `openat` that failed with `errno`.
    init(opening path: String, errno: Int32) {
        switch errno {
        case ENOENT, ENOTDIR: self.init(.notFound, path: path, errno: errno)
        case ELOOP: self.init(.symbolicLink, path: path, errno: errno)
        default: self.init(.unreadable, path: path, errno: errno)
        }
    }

    public var description: String {
        let cause = errno == 0 ? "" : " (\(String(cString: strerror(errno))))"
        switch reason {
        case .badRoot: return "the local root \(path) cannot be opened as a directory\(cause)"
        case .notFound: return "no file \(path) under the local root\(cause)"
        case .symbolicLink: return "\(path) under the local root is or goes through a symbolic link, which is not followed"
        case .notRegularFile: return "\(path) under the local root is not a regular file"
        case .unreadable: return "\(path) under the local root cannot be read\(cause)"
        }
    }

    /// The answer's status and code: 404 for a missing file, 403 for what is refused.
    var answer: (status: Int, code: String, message: String) {
        switch reason {
        case .notFound: (404, "source_not_found", "no such file under the local root")
        case .symbolicLink: (403, "source_not_allowed", "the local path goes through a symbolic link, which is not followed")
        case .notRegularFile: (403, "source_not_allowed", "the local source is not a regular file")
        case .unreadable, .badRoot: (403, "source_not_allowed", "the local source cannot be read")
        }
    }
}
