/// Why the disk cache could not do what was asked. Every SQLite and file-system failure becomes
/// one of these (logged where it happens); none of them crashes the process.
///
/// ```swift
/// do { try cache.store(data, for: key) } catch let error as DiskCacheError { log(error.description) }
/// ```
public enum DiskCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The cache directory (or one of its sub-folders) could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// An entry's file could not be written (full disk, no permission, …); nothing was stored.
    case writeFailed(path: String, reason: String)
    /// The SQLite index could not be opened, read or written.
    case indexFailed(path: String, reason: String)
    /// The entry is larger than the cache's whole size limit; it is not stored.
    case entryTooLarge(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case let .cannotCreateDirectory(path, reason): "cannot create cache directory \(path): \(reason)"
        case let .writeFailed(path, reason): "cannot write cache file \(path): \(reason)"
        case let .indexFailed(path, reason): "cache index \(path) failed: \(reason)"
        case let .entryTooLarge(bytes, limit): "entry of \(bytes) bytes exceeds the cache size limit of \(limit) bytes"
        }
    }
}
