internal import GRDB

/// The index's tables. `totals` is maintained by triggers inside the same transactions as the
/// rows, so it can never disagree with them; `counter` holds hit/miss/damage/eviction counts and
/// the time of the last orphan sweep, summed over every process.
/// Version 2 added `entry.vary` (``CacheMetadata/vary``); a version 1 index gains the column.
/// Version 3 added `reservation`: one row per open cache that writes, the bytes it holds for its
/// writes in progress (``CacheIndex/reserve(policy:limits:usage:wanted:granted:)``). An older index gains the
/// table; an older version of this code ignores it (its own writes in progress then count only
/// for itself, as before).
enum CacheIndexSchema {
    static let version = 3

    /// Creates the tables, or brings an older index up to ``version`` (inside the caller's
    /// transaction, so two processes opening one index at once migrate it once).
    static func create(_ db: Database) throws {
        let current = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        guard current < version else { return }
        if current == 1 { try db.execute(sql: "ALTER TABLE entry ADD COLUMN vary TEXT") }
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS entry (
                key TEXT PRIMARY KEY NOT NULL,
                file TEXT NOT NULL,
                size INTEGER NOT NULL,
                checksum INTEGER NOT NULL,
                url TEXT, contentType TEXT, etag TEXT, lastModified TEXT,
                expiresAt REAL,
                requiresRevalidation INTEGER NOT NULL DEFAULT 0,
                storedAt REAL NOT NULL,
                lastAccess REAL NOT NULL,
                vary TEXT);
            CREATE INDEX IF NOT EXISTS entry_lastAccess ON entry(lastAccess);
            CREATE INDEX IF NOT EXISTS entry_storedAt ON entry(storedAt);
            CREATE TABLE IF NOT EXISTS totals (
                id INTEGER PRIMARY KEY CHECK (id = 0), count INTEGER NOT NULL, bytes INTEGER NOT NULL);
            INSERT OR IGNORE INTO totals VALUES (0, 0, 0);
            CREATE TRIGGER IF NOT EXISTS entry_inserted AFTER INSERT ON entry BEGIN
                UPDATE totals SET count = count + 1, bytes = bytes + NEW.size WHERE id = 0; END;
            CREATE TRIGGER IF NOT EXISTS entry_deleted AFTER DELETE ON entry BEGIN
                UPDATE totals SET count = count - 1, bytes = bytes - OLD.size WHERE id = 0; END;
            CREATE TRIGGER IF NOT EXISTS entry_resized AFTER UPDATE OF size ON entry BEGIN
                UPDATE totals SET bytes = bytes - OLD.size + NEW.size WHERE id = 0; END;
            CREATE TABLE IF NOT EXISTS counter (name TEXT PRIMARY KEY NOT NULL, value REAL NOT NULL);
            INSERT OR IGNORE INTO counter VALUES ('hits', 0), ('misses', 0), ('damaged', 0), ('evictions', 0), ('lastSweep', 0);
            CREATE TABLE IF NOT EXISTS reservation (
                owner TEXT PRIMARY KEY NOT NULL, process TEXT NOT NULL, bytes INTEGER NOT NULL,
                renewed REAL NOT NULL, deadSince REAL);
            PRAGMA user_version = \(version);
            """)
    }
}
