import Foundation
internal import GRDB
internal import Logging

/// One entry of the index: which file holds a key's bytes, their checksum, and their metadata.
struct IndexRow: Sendable, Equatable {
    var key: String
    var file: String
    var size: Int
    var checksum: Int64
    var metadata: CacheMetadata
}

/// The disk cache's index: one SQLite database in WAL mode (GRDB's `DatabasePool`), shared by
/// every process that opens the directory. Readers never block the writer; writers wait for
/// each other up to the busy timeout. Totals are kept by triggers, so the size limit is known
/// without a scan; the schema is in ``CacheIndexSchema``.
final class CacheIndex: Sendable {
    let pool: DatabasePool
    let path: String

    /// Opens (creating) the index; a file that is not a readable SQLite database is moved aside
    /// (`index.sqlite.damaged-<time>`) and a new one started: the files become orphans.
    /// `footprint` sizes the WAL: checkpointed every ``DiskFootprint/walBudget`` bytes and cut
    /// back to that size when it restarts (SQLite's defaults let it grow to 4 MB and keep it).
    init(path: String, busyTimeout: Duration, footprint: DiskFootprint, logger: Logger) throws(DiskCacheError) {
        self.path = path
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(busyTimeout.seconds)
        configuration.maximumReaderCount = 4
        configuration.label = "webimage.disk-cache"
        // A new index is made without syncs: switching a new file to WAL and GRDB's first write
        // cost five `fdatasync`s (60 ms on this machine's disk, a tenth of a 24-photo `fetch`
        // into a new cache folder). Nothing is lost by a crash then: an index left without its
        // schema gets it at the next open, a damaged one is moved aside (below). GRDB sets
        // `synchronous = NORMAL` on the writer once WAL is on, so every later commit is as before.
        // Only the first connection, the writer (GRDB opens it first, readers on demand): a
        // reader can be the last connection to close, and the checkpoint it then runs must sync.
        let unsynced = Locked(!FileManager.default.fileExists(atPath: path))
        configuration.prepareDatabase { db in
            let off = unsynced.withLock { first in defer { first = false }; return first }
            try db.execute(sql: off ? "PRAGMA synchronous = OFF" : "PRAGMA synchronous = NORMAL")  // WAL: commits survive crashes
            try db.execute(sql: "PRAGMA journal_size_limit = \(footprint.walBudget)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(footprint.walPages)")
        }
        do {
            pool = try Self.open(path, configuration)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            let aside = path + ".damaged-\(Int(Date().timeIntervalSince1970))"
            logger.error("disk cache index damaged, starting a new one", metadata: ["path": "\(path)", "movedTo": "\(aside)", "error": "\(error)"])
            for suffix in ["", "-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
            do { pool = try Self.open(path, configuration) } catch { throw .indexFailed(path: path, reason: "\(error)") }
        } catch {
            throw .indexFailed(path: path, reason: "\(error)")
        }
    }

    private static func open(_ path: String, _ configuration: GRDB.Configuration) throws -> DatabasePool {
        let pool = try DatabasePool(path: path, configuration: configuration)
        let version = try pool.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
        if version < CacheIndexSchema.version {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try CacheIndexSchema.create(db)
                    return .commit
                }
            }
        }
        return pool
    }

    /// Runs `body` mapping every error to ``DiskCacheError/indexFailed(path:reason:)``.
    func run<T>(_ body: () throws -> T) throws(DiskCacheError) -> T {
        do { return try body() } catch { throw .indexFailed(path: path, reason: "\(error)") }
    }

    /// A write in an `IMMEDIATE` transaction: the write lock is taken first, so two processes
    /// never deadlock upgrading a read to a write (SQLite would answer `SQLITE_BUSY` at once).
    func write<T>(_ body: (Database) throws -> T) throws(DiskCacheError) -> T {
        try run {
            try pool.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        }
    }

    /// Bytes of the index's files on disk (database, WAL, `-shm`), inside a transaction.
    func indexBytes(_ db: Database) throws -> Int {
        let logical = try Int.fetchOne(db.cachedStatement(sql: "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")) ?? 0
        return DiskFootprint.indexBytes(path: path, logicalSize: logical)
    }

    /// Copies the WAL into the database and truncates it to zero bytes (after an eviction, so the
    /// pages of the evicted rows do not linger in it). Waits for readers up to the busy timeout;
    /// failing is harmless (the next checkpoint does it).
    func truncateWAL() {
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    /// One `SELECT` by primary key: atomic by itself, so it runs without GRDB's read transaction
    /// (`unsafeRead`; the `BEGIN`/`COMMIT` pair was a quarter of a 50 KB disk hit, measured).
    func row(for key: String) throws(DiskCacheError) -> IndexRow? {
        try run {
            try pool.unsafeRead { db in
                let statement = try db.cachedStatement(sql: "SELECT * FROM entry WHERE key = ?")
                return try Row.fetchOne(statement, arguments: [key]).map { try Self.indexRow($0) }
            }
        }
    }

    /// Rows in key order after `key`, `limit` at a time (for ``DiskCache/verify()``): those that
    /// decode, the keys of those that do not, and the last key of the page (`nil` at the end).
    func rows(after key: String, limit: Int) throws(DiskCacheError) -> (rows: [IndexRow], undecodable: [String], last: String?) {
        try run {
            try pool.read { db in
                var rows: [IndexRow] = [], undecodable: [String] = [], last: String?
                let page = try Row.fetchAll(db, sql: "SELECT * FROM entry WHERE key > ? ORDER BY key LIMIT ?", arguments: [key, limit])
                for row in page {
                    guard let key = String.fromDatabaseValue(row["key"]) else { continue }
                    last = key
                    if let decoded = try? Self.indexRow(row) { rows.append(decoded) } else { undecodable.append(key) }
                }
                return (rows, undecodable, last)
            }
        }
    }

    func fileNames() throws(DiskCacheError) -> Set<String> {
        try run { try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT file FROM entry")) } }
    }

    /// A row of `entry` as an ``IndexRow``. The index is data other processes wrote: a value of
    /// the wrong type (text where a size belongs, a real past `Int`'s range) throws, where GRDB's
    /// subscripts would stop the process.
    static func indexRow(_ row: Row) throws -> IndexRow {
        let flags = try row.decode(Int.self, forColumn: "requiresRevalidation")  // CacheMetadata.revalidationFlags
        let size = try row.decode(Int.self, forColumn: "size")
        let metadata = CacheMetadata(
            url: try row.decode(String?.self, forColumn: "url"), contentType: try row.decode(String?.self, forColumn: "contentType"),
            byteCount: size, etag: try row.decode(String?.self, forColumn: "etag"),
            lastModified: try row.decode(String?.self, forColumn: "lastModified"),
            expiresAt: try row.decode(Double?.self, forColumn: "expiresAt").map(Date.init(timeIntervalSince1970:)),
            requiresRevalidation: flags & 1 != 0, mustRevalidate: flags & 2 != 0,
            storedAt: Date(timeIntervalSince1970: try row.decode(Double.self, forColumn: "storedAt")),
            lastAccess: Date(timeIntervalSince1970: try row.decode(Double.self, forColumn: "lastAccess")),
            vary: try row.decode(String?.self, forColumn: "vary"))
        return IndexRow(
            key: try row.decode(String.self, forColumn: "key"), file: try row.decode(String.self, forColumn: "file"), size: size,
            checksum: try row.decode(Int64.self, forColumn: "checksum"), metadata: metadata)
    }
}

extension CacheMetadata {
    /// `requiresRevalidation` (bit 0) and `mustRevalidate` (bit 1) in the index's one column, so
    /// the schema stays as it was: an older reader sees any non-zero value as "revalidate first".
    var revalidationFlags: Int { (requiresRevalidation ? 1 : 0) | (mustRevalidate ? 2 : 0) }
}
