/// The index rows this process read lately, so that a repeated disk hit takes its row from
/// memory instead of SQLite: the index read was half of a 50 KB hit (GRDB's queue, SQLite's file
/// locks, building the row; measured with `perf`, docs/architecture/caching.md).
///
/// A remembered row stays right across processes because it names a file that never changes:
/// every store writes a file under a new name and removes the old one, and eviction removes the
/// file. A row that another process (or another ``DiskCache`` on the same folder) replaced,
/// evicted or removed therefore names a missing file, and the look-up then forgets it and reads
/// the index again. A damaged file is caught by the checksum as before. What a remembered row
/// can miss is a metadata-only update made elsewhere (after a `304`: this process then
/// revalidates once more itself), or a replacement whose writer died between its commit and
/// deleting the old file (that file then lives until the orphan sweep). So a row is trusted for
/// ``timeToLive`` only, then read from the index again. Rows are forgotten on every change this
/// cache makes to a key, and least recently used ones go first beyond ``limit``.
final class RecentRows: Sendable {
    private let rows = Locked(CostLRU<IndexRow>())
    /// At most this many rows (about 250 bytes each).
    let limit: Int
    /// How long a row is used before the index is read again.
    let timeToLive: Duration

    init(limit: Int = 4096, timeToLive: Duration = .seconds(10)) {
        self.limit = limit
        self.timeToLive = timeToLive
    }

    /// The remembered row for `key`, made most recent.
    subscript(key: String) -> IndexRow? {
        rows.withLock { $0.value(forKey: key) }
    }

    func remember(_ row: IndexRow) {
        guard limit > 0 else { return }
        rows.withLock { rows in
            rows.insert(row, cost: 1, forKey: row.key, expires: .now + timeToLive)
            _ = rows.trim(toCost: .max, count: limit)
        }
    }

    func forget(_ key: String) {
        rows.withLock { _ = $0.remove(key) }
    }

    func forgetAll() {
        rows.withLock { $0.removeAll() }
    }
}
