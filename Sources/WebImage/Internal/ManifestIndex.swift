import Foundation
internal import GRDB

/// What earlier runs of `webimage fetch` recorded in an output folder's manifest, on disk instead
/// of in memory: a temporary SQLite file (journal and `fsync` off: it is rebuilt by every run, and
/// nothing reads it after the run) with one row per URL — the last line of a URL wins, as in the
/// manifest — looked up by URL (`--skip-existing`: is this URL's file kept?) and by file name
/// (is this name recorded for some URL?). SQLite's page cache is capped at ``cacheKiB``, so the
/// memory it takes does not grow with the manifest; the file takes about as much disk as the
/// manifest itself (docs/COMMANDS.md has the measured cost).
///
/// ```swift
/// let index = try ManifestIndex(path: "/out/.index.partial-1")
/// try index.insert([.init(url: "https://example.com/a.jpg", file: "a.jpg", bytes: 1234)])
/// index.entry(for: "https://example.com/a.jpg")  // Entry(file: "a.jpg", bytes: 1234)
/// index.records(file: "a.jpg")                   // true
/// index.remove()
/// ```
package final class ManifestIndex: Sendable {
    /// One manifest line.
    package struct Row: Equatable, Sendable {
        package var url: String
        package var file: String
        package var bytes: Int
        package init(url: String, file: String, bytes: Int) {
            self.url = url
            self.file = file
            self.bytes = bytes
        }
    }

    /// SQLite's page cache: 8 MiB at most, whatever the number of rows.
    package static let cacheKiB = 8 * 1024

    /// The SQLite file (removed by ``remove()``).
    package let path: String
    private let queue: DatabaseQueue

    /// Creates an empty index in a new file at `path`.
    package init(path: String) throws {
        var configuration = Configuration()
        configuration.label = "fetch manifest index"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            try db.execute(sql: "PRAGMA cache_size = -\(Self.cacheKiB)")
        }
        self.path = path
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE line (url TEXT PRIMARY KEY NOT NULL, file TEXT NOT NULL, bytes INTEGER NOT NULL) WITHOUT ROWID;
                CREATE INDEX line_file ON line (file);
                """)
        }
    }

    /// Adds rows in one transaction (a later row of a URL replaces the earlier one).
    package func insert(_ rows: [Row]) throws {
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO line (url, file, bytes) VALUES (?, ?, ?)")
            for row in rows { try statement.execute(arguments: [row.url, row.file, row.bytes]) }
        }
    }

    /// The last file recorded for `url` and its size.
    package func entry(for url: String) -> Row? {
        let found = try? queue.read { db in
            try GRDB.Row.fetchOne(db, sql: "SELECT file, bytes FROM line WHERE url = ?", arguments: [url])
        }
        guard let found, let file = found["file"] as String?, let bytes = found["bytes"] as Int? else { return nil }
        return Row(url: url, file: file, bytes: bytes)
    }

    /// Whether some URL's last line records `file`.
    package func records(file: String) -> Bool {
        (try? queue.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM line WHERE file = ?)", arguments: [file]) }) == true
    }

    /// The URLs recorded.
    package var count: Int {
        (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM line") }) ?? 0
    }

    /// Closes the database and deletes its file.
    package func remove() {
        try? queue.close()
        unlink(path)
    }
}
