import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the disk cache's folder may hold beyond its entries' bytes, and how the index's own files
/// are kept within it.
///
/// The bound: the regular files of the folder — entry files, `index.sqlite`, its `-wal` and
/// `-shm`, and the temporary files of writes in progress — stay within
/// ``DiskCache/Configuration/sizeLimit`` plus ``slack`` (the larger of 1 MiB and 2 % of the limit)
/// at every moment. Eviction counts the writes in progress and the index's files beyond
/// ``indexAllowance`` (half the slack) as used bytes, so a small cache is not all index; the WAL
/// is checkpointed every ``walBudget`` bytes (a quarter of the slack) and cut back to that size
/// (`wal_autocheckpoint`, `journal_size_limit`), and truncated after every eviction. What eviction
/// does not see is the WAL's growth since it was measured: one budget plus the pages of one
/// transaction, within the last quarter.
struct DiskFootprint: Sendable, Equatable {
    /// Bytes the folder may pass the size limit by.
    let slack: Int
    /// Bytes the WAL may grow to before it is checkpointed (a multiple of the page size).
    let walBudget: Int
    /// Bytes a cache reserves in the index for its writes in progress when it reserves at all
    /// (more when one write needs more): every process counts them as used, so a store they cover
    /// needs no transaction before its temporary file. 1/64 of the limit, at least 64 KiB, at most
    /// 8 MiB and an eighth of the limit — what the folder holds less per cache that writes.
    let writeGrant: Int
    /// Bytes of the index's files (database, WAL, `-shm`) not counted against the limit.
    var indexAllowance: Int { slack / 2 }
    static let pageSize = 4096

    init(sizeLimit: Int) {
        let limit = max(sizeLimit, 0)
        slack = max(1 << 20, limit / 50)
        // A quarter of the slack (so 256 KiB at least), at most 4 MiB (SQLite's default of 1000
        // pages): a checkpoint every few dozen stores for a 2 MiB cache, every few hundred for 500 MB.
        walBudget = min(slack / 4, 4 << 20) / Self.pageSize * Self.pageSize
        writeGrant = min(max(limit / 64, 64 << 10), 8 << 20, max(limit / 8, 1))
    }

    /// `wal_autocheckpoint`'s argument.
    var walPages: Int { walBudget / Self.pageSize }

    /// Bytes of the index's files on disk now: the database (or the size its pages in the WAL
    /// will give it, if larger), the WAL and the shared-memory index.
    static func indexBytes(path: String, logicalSize: Int) -> Int {
        max(fileSize(path), logicalSize) + fileSize(path + "-wal") + fileSize(path + "-shm")
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
