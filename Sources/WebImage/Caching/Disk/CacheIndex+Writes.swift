import Foundation
internal import GRDB

/// Access times and counts gathered in memory and written in one transaction later, so a hit
/// costs no write transaction.
struct PendingUsage: Sendable {
    var touches: [String: Double] = [:]
    var hits = 0
    var misses = 0
    var damaged = 0
    var isEmpty: Bool { touches.isEmpty && hits == 0 && misses == 0 && damaged == 0 }
}

/// What the size and age limits are applied with.
struct IndexLimits: Sendable {
    /// Evict when the total passes this…
    var sizeLimit: Int
    /// …down to this.
    var sizeTarget: Int
    /// `lastAccess` or `storedAt`.
    var ageColumn: String
    /// Entries whose age column is older than this (seconds since 1970) are dropped.
    var cutoff: Double
    /// Bytes of the index's own files that are not counted as used (``DiskFootprint/indexAllowance``).
    var indexAllowance = Int.max
    /// Whether every cache's reservation for its writes in progress counts as used (not for
    /// ``DiskCache/trim(toSize:)``, which is about the entries' bytes).
    var countsReservations = true
    /// The largest size a row can have: no cache stores an entry larger than its own limit, so
    /// a row past it (or negative) was damaged or written by something else.
    var entrySizeLimit = Int.max
}

/// What a write transaction removed.
struct IndexChange: Sendable {
    /// Files no row points to any more (replaced, expired and evicted entries).
    var unreferenced: [String] = []
    var expired = 0
    var evicted = 0
    /// Owners of reservations dead for longer than the grace period (``CacheIndex/markDead(_:_:)``).
    var reclaimable: [String] = []
    /// A reservation that did not fit (``CacheIndex/reserve(policy:limits:usage:wanted:granted:)``).
    var refused = false
}

/// What a store's transaction does to the storing cache's reservation: `target` (called under
/// the write lock) is the size it is to have once the entry counts as an entry, or nil to leave
/// it; `resized` learns whether the row was still there.
struct ReservationUpdate {
    var owner: String
    var target: () -> Int?
    var resized: (Int, Bool) -> Void
}

extension CacheIndex {
    /// Replaces `row`, shrinks the storing cache's reservation (its entry is no longer a write in
    /// progress) and applies the limits, in one transaction. Returns the files no row points to
    /// any more (the replaced version and the evicted entries) and the number evicted.
    func store(_ row: IndexRow, limits: IndexLimits, usage: PendingUsage, reservation: ReservationUpdate) throws(DiskCacheError) -> IndexChange {
        try write { db in
            try Self.apply(usage, db)
            var unreferenced: [String] = []
            // Statements of every store are prepared once per connection (`cachedStatement`):
            // preparing them, with the authorizer GRDB runs meanwhile, was 5 % of a store.
            if let old = try String.fetchOne(db.cachedStatement(sql: "SELECT file FROM entry WHERE key = ?"), arguments: [row.key]) {
                unreferenced.append(old)
                try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?").execute(arguments: [row.key])
            }
            let m = row.metadata
            try db.cachedStatement(
                sql: """
                    INSERT INTO entry (key, file, size, checksum, url, contentType, etag, lastModified, expiresAt,
                        requiresRevalidation, storedAt, lastAccess, vary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(
                arguments: [row.key, row.file, row.size, row.checksum, m.url, m.contentType, m.etag, m.lastModified,
                            m.expiresAt?.timeIntervalSince1970, m.revalidationFlags, m.storedAt.timeIntervalSince1970,
                            m.lastAccess.timeIntervalSince1970, m.vary])
            if let target = reservation.target() {
                reservation.resized(target, try Self.resize(reservation.owner, to: target, db))
            }
            let expired = try Self.deleteExpired(limits, limit: 32, db)
            var change = try evict(keeping: row.key, limits: limits, db)
            change.unreferenced += unreferenced + expired
            change.expired = expired.count
            return change
        }
    }

    /// Drops expired entries, then least recently used ones down to `limits.sizeTarget` (when
    /// the total passes `limits.sizeLimit`), and marks reservations of ended processes dead.
    /// Returns the files to delete and the eviction count.
    func trim(limits: IndexLimits, usage: PendingUsage, policy: ReservationPolicy) throws(DiskCacheError) -> IndexChange {
        try write { db in
            try Self.apply(usage, db)
            let reclaimable = try Self.markDead(policy, db)
            let expired = try Self.deleteExpired(limits, limit: .max, db)
            var change = try evict(keeping: nil, limits: limits, db)
            change.unreferenced += expired
            change.expired = expired.count
            change.reclaimable = reclaimable
            return change
        }
    }

    /// Replaces the metadata of `key` (its bytes, file and checksum stay); false when absent.
    func update(_ m: CacheMetadata, for key: String) throws(DiskCacheError) -> Bool {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE entry SET url = ?, contentType = ?, etag = ?, lastModified = ?, expiresAt = ?,
                        requiresRevalidation = ?, storedAt = ?, lastAccess = ?, vary = ? WHERE key = ?
                    """,
                arguments: [m.url, m.contentType, m.etag, m.lastModified, m.expiresAt?.timeIntervalSince1970,
                            m.revalidationFlags, m.storedAt.timeIntervalSince1970, m.lastAccess.timeIntervalSince1970, m.vary, key])
            return db.changesCount > 0
        }
    }

    /// Deletes the row of `key` — only if it still names `file`, when given (another process may
    /// have replaced it meanwhile). Returns the file of the deleted row.
    func remove(key: String, ifFile file: String? = nil, usage: PendingUsage = .init()) throws(DiskCacheError) -> String? {
        try write { db in
            try Self.apply(usage, db)
            guard let current = try String.fetchOne(db, sql: "SELECT file FROM entry WHERE key = ?", arguments: [key]),
                  file == nil || current == file else { return nil }
            try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [key])
            return current
        }
    }

    func removeAll() throws(DiskCacheError) {
        try write { db in try db.execute(sql: "DELETE FROM entry") }
    }

    func flush(_ usage: PendingUsage) throws(DiskCacheError) {
        guard !usage.isEmpty else { return }
        try write { db in try Self.apply(usage, db) }
    }

    /// True (and the sweep time recorded) when no process swept within `interval` seconds.
    func claimSweep(now: Double, interval: Double) throws(DiskCacheError) -> Bool {
        try write { db in
            let last = try Double.fetchOne(db, sql: "SELECT value FROM counter WHERE name = 'lastSweep'") ?? 0
            guard now - last >= interval else { return false }
            try db.execute(sql: "UPDATE counter SET value = ? WHERE name = 'lastSweep'", arguments: [now])
            return true
        }
    }

    func statistics() throws(DiskCacheError) -> DiskCache.Statistics {
        try run {
            try pool.read { db in
                let totals = try Row.fetchOne(db, sql: "SELECT count, bytes FROM totals WHERE id = 0")
                let oldest = try Row.fetchOne(db, sql: "SELECT min(lastAccess) AS access, min(storedAt) AS stored FROM entry")
                var counters: [String: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT name, value FROM counter") {
                    counters[try row.decode(String.self, forColumn: "name")] = Self.saturatedInt(row["value"])
                }
                return DiskCache.Statistics(
                    count: totals.map { Self.saturatedInt($0["count"]) } ?? 0, totalSize: totals.map { Self.saturatedInt($0["bytes"]) } ?? 0,
                    oldestAccess: oldest.flatMap { Double.fromDatabaseValue($0["access"]) }.map(Date.init(timeIntervalSince1970:)),
                    oldestStored: oldest.flatMap { Double.fromDatabaseValue($0["stored"]) }.map(Date.init(timeIntervalSince1970:)),
                    hits: counters["hits"] ?? 0, misses: counters["misses"] ?? 0,
                    damaged: counters["damaged"] ?? 0, evictions: counters["evictions"] ?? 0)
            }
        }
    }

    // MARK: - Inside a transaction

    static func apply(_ usage: PendingUsage, _ db: Database) throws {
        guard !usage.isEmpty else { return }
        let touch = try db.cachedStatement(sql: "UPDATE entry SET lastAccess = max(lastAccess, ?) WHERE key = ?")
        for (key, time) in usage.touches { try touch.execute(arguments: [time, key]) }
        let add = try db.cachedStatement(sql: "UPDATE counter SET value = value + ? WHERE name = ?")
        for (name, value) in [("hits", usage.hits), ("misses", usage.misses), ("damaged", usage.damaged)] where value != 0 {
            try add.execute(arguments: [value, name])
        }
    }

    static func deleteExpired(_ limits: IndexLimits, limit: Int, _ db: Database) throws -> [String] {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT key, file FROM entry WHERE \(limits.ageColumn) < ? LIMIT ?"), arguments: [limits.cutoff, limit])
        for row in rows { try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?").execute(arguments: [row["key"] as DatabaseValue]) }
        return rows.compactMap { String.fromDatabaseValue($0["file"]) }
    }

    /// Least recently used entries go until the entries' bytes, the index's files beyond their
    /// allowance and every cache's reservation for its writes in progress fit in
    /// `limits.sizeTarget` (when they pass `limits.sizeLimit`). The index's files do not shrink
    /// when rows go (freed pages are reused), so they count as they are.
    func evict(keeping key: String?, limits: IndexLimits, _ db: Database) throws -> IndexChange {
        var entries = try Self.totalBytes(db)
        var damaged: [String] = []
        // Each store evicts back under the limit, so a total past twice the limit, or below zero,
        // comes from damaged rows (a size near 2⁶³ would otherwise evict every good entry used
        // before it; a hugely negative one would stop eviction for good). They go first.
        if entries < 0 || entries / 2 > limits.sizeLimit {
            damaged = try Self.dropImplausibleRows(limits, db)
            entries = try Self.totalBytes(db)
        }
        var reserved = 0
        if limits.countsReservations {
            reserved = try Int.fetchOne(db.cachedStatement(sql: "SELECT \(Self.reservedSum) FROM reservation")) ?? 0
        }
        // Saturating: sizes come from rows other processes wrote, and a damaged one must not trap.
        let used = [entries, try indexExcess(limits, db), reserved].reduce(0, Self.saturatingSum)
        let files = try Self.evict(from: used, keeping: key, limits: limits, db)
        return IndexChange(unreferenced: damaged + files, evicted: files.count)
    }

    /// The entries' bytes from `totals`. SQLite turns an integer sum that overflows into a real
    /// number; one out of `Int`'s range reads as `Int.max` (or `.min`), never as a trap.
    private static func totalBytes(_ db: Database) throws -> Int {
        guard let value = try DatabaseValue.fetchOne(db.cachedStatement(sql: "SELECT bytes FROM totals WHERE id = 0")) else { return 0 }
        return Self.saturatedInt(value)
    }

    /// `value` as an `Int`: an integer as it is, a real rounded into `Int`'s range, anything else 0.
    static func saturatedInt(_ value: DatabaseValue) -> Int {
        switch value.storage {
        case .int64(let number): Int(number)
        case .double(let number): number.isNaN ? 0 : number >= 0x1p63 ? .max : number <= -0x1p63 ? .min : Int(number)
        default: 0
        }
    }

    /// Deletes the rows whose size no cache could have stored, counts them as damaged, and sums
    /// `totals` again from the rows (the damaged sum may have become a rounded real). Returns
    /// their files.
    private static func dropImplausibleRows(_ limits: IndexLimits, _ db: Database) throws -> [String] {
        let rows = try Row.fetchAll(db, sql: "SELECT key, file FROM entry WHERE size < 0 OR size > ?", arguments: [limits.entrySizeLimit])
        for row in rows {
            try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [row["key"] as DatabaseValue])
        }
        try db.execute(sql: "UPDATE counter SET value = value + ? WHERE name = 'damaged'", arguments: [rows.count])
        try db.execute(sql: """
            UPDATE totals SET count = (SELECT count(*) FROM entry),
                bytes = (SELECT coalesce(sum(max(0, min(size, ?))), 0) FROM entry) WHERE id = 0
            """, arguments: [limits.entrySizeLimit])
        return rows.compactMap { String.fromDatabaseValue($0["file"]) }
    }

    /// Bytes of the index's files beyond their allowance, counted as used.
    func indexExcess(_ limits: IndexLimits, _ db: Database) throws -> Int {
        limits.indexAllowance == .max ? 0 : max(0, try indexBytes(db) - limits.indexAllowance)
    }

    static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    private static func evict(from used: Int, keeping key: String?, limits: IndexLimits, _ db: Database) throws -> [String] {
        var bytes = used
        guard bytes > limits.sizeLimit else { return [] }
        var files: [String] = []
        while bytes > limits.sizeTarget {
            let rows = try Row.fetchAll(
                db, sql: "SELECT key, file, size FROM entry WHERE key IS NOT ? ORDER BY lastAccess LIMIT 64",
                arguments: [key])
            guard !rows.isEmpty else { break }
            for row in rows where bytes > limits.sizeTarget {
                try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [row["key"] as DatabaseValue])
                bytes = Self.saturatingSum(bytes, -max(Self.saturatedInt(row["size"]), -Int.max))
                files.append(try row.decode(String.self, forColumn: "file"))
            }
        }
        if !files.isEmpty {
            try db.execute(sql: "UPDATE counter SET value = value + ? WHERE name = 'evictions'", arguments: [files.count])
        }
        return files
    }
}
