import Foundation
internal import GRDB

/// A cache's row in the index's `reservation` table: bytes it holds for its writes in progress.
struct Reservation: Sendable, Equatable {
    /// One open ``DiskCache`` (random, per instance).
    var owner: String
    /// Its process (``ProcessIdentity``).
    var process: String
    var bytes: Int
    /// When the owner last wrote the row (seconds since 1970).
    var renewed: Double
    /// When another cache found its process ended or the row stale; it still counts until then
    /// plus the grace period, when the orphan sweep has taken the files it may have left.
    var deadSince: Double?
}

/// Whose reservation is written, and how other caches' reservations are judged.
struct ReservationPolicy: Sendable {
    var owner: String
    var process = ProcessIdentity.current
    var now: Double
    /// ``DiskCache/Configuration/orphanGracePeriod``, in seconds.
    var grace: Double
    /// A row whose process's liveness is unknown is dead when not renewed for this long (twice
    /// the grace period: its owner renews it after half of one, and a store takes less than one).
    var staleAfter: Double { 2 * grace }
}

extension CacheIndex {
    /// Before a write that this cache's reservation does not cover: in one transaction, marks other
    /// caches' reservations whose process has ended (or that went stale) as dead, then asks
    /// `wanted` (called under the write lock) how many bytes this cache's reservation must hold.
    /// When the entries, the index's files beyond their allowance and every reservation, this one
    /// at that size included, can fit the limit, the row is written, least recently used entries
    /// are evicted as the limits require and `granted` is called with the size; otherwise only the
    /// marks are written (the caller waits for other writes to end and asks again).
    func reserve(
        policy: ReservationPolicy, limits: IndexLimits, usage: PendingUsage, wanted: () -> Int, granted: (Int) -> Void
    ) throws(DiskCacheError) -> IndexChange {
        try write { db in
            try Self.apply(usage, db)
            var change = IndexChange(reclaimable: try Self.markDead(policy, db))
            let bytes = wanted()
            let others = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.reservedSum) FROM reservation WHERE owner != ?"), arguments: [policy.owner]) ?? 0
            // Saturating, as in `evict`: other processes wrote `others`.
            guard [try indexExcess(limits, db), others, bytes].reduce(0, Self.saturatingSum) <= limits.sizeLimit else {
                change.refused = true
                return change
            }
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO reservation VALUES (?, ?, ?, ?, NULL)")
                .execute(arguments: [policy.owner, policy.process, bytes, policy.now])
            granted(bytes)
            let expired = try Self.deleteExpired(limits, limit: 32, db)
            let evicted = try evict(keeping: nil, limits: limits, db)
            change.unreferenced = evicted.unreferenced + expired
            change.evicted = evicted.evicted
            change.expired = expired.count
            return change
        }
    }

    /// The sum of the rows' bytes, each taken within 0…1 TiB: the index is data like any other,
    /// and a row of 2⁶³ bytes must neither overflow the sum nor trap the arithmetic after it.
    static let reservedSum = "coalesce(sum(max(0, min(bytes, 1099511627776))), 0)"

    /// This cache's reservation becomes `bytes` (inside a store's transaction, after its entry
    /// counts as an entry). False when the row is gone (another cache took it as dead).
    static func resize(_ owner: String, to bytes: Int, _ db: Database) throws -> Bool {
        try db.cachedStatement(sql: "UPDATE reservation SET bytes = ?, deadSince = NULL WHERE owner = ?").execute(arguments: [bytes, owner])
        return db.changesCount > 0
    }

    /// Removes this cache's reservation (it has no writes in progress: closed).
    func release(owner: String) throws(DiskCacheError) {
        try write { db in try db.execute(sql: "DELETE FROM reservation WHERE owner = ?", arguments: [owner]) }
    }

    /// Removes the dead reservations of `owners` that were found dead before `cutoff` (after the
    /// orphan sweep removed every file older than the grace period, those of their writes too).
    func drop(_ owners: [String], deadBefore cutoff: Double) throws(DiskCacheError) {
        try write { db in
            for owner in owners {
                try db.execute(sql: "DELETE FROM reservation WHERE owner = ? AND (deadSince <= ? OR deadSince > ?)",
                               arguments: [owner, cutoff, cutoff + 1e6])
            }
        }
    }

    func reservations() throws(DiskCacheError) -> [Reservation] {
        try run {
            try pool.read { db in
                // Throwing decodes: a value of the wrong type, written by another program, is an error, not a trap.
                try Row.fetchAll(db, sql: "SELECT * FROM reservation ORDER BY owner").map {
                    Reservation(
                        owner: try $0.decode(String.self, forColumn: "owner"), process: try $0.decode(String.self, forColumn: "process"),
                        bytes: try $0.decode(Int.self, forColumn: "bytes"), renewed: try $0.decode(Double.self, forColumn: "renewed"),
                        deadSince: try $0.decode(Double?.self, forColumn: "deadSince"))
                }
            }
        }
    }

    /// Marks other owners' rows dead whose process ended (or, when that is unknown, that were
    /// not renewed for ``ReservationPolicy/staleAfter``). Returns the owners dead for longer than
    /// the grace period: their files are then old enough for the orphan sweep, and their rows can go.
    static func markDead(_ policy: ReservationPolicy, _ db: Database) throws -> [String] {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT owner, process, renewed, deadSince FROM reservation WHERE owner != ?"), arguments: [policy.owner])
        var reclaimable: [String] = []
        for row in rows {
            // A row with values of the wrong type (another program's writing) is dropped: decoded
            // with throwing calls, never GRDB's trapping subscripts.
            let deadValue: DatabaseValue = row["deadSince"]
            let deadSince = Double.fromDatabaseValue(deadValue)
            guard let owner = String.fromDatabaseValue(row["owner"]), let process = String.fromDatabaseValue(row["process"]),
                  let renewed = Double.fromDatabaseValue(row["renewed"]), deadValue.isNull || deadSince != nil
            else {
                try db.execute(sql: "DELETE FROM reservation WHERE owner = ?", arguments: [row["owner"] as DatabaseValue])
                continue
            }
            if let dead = deadSince {
                // mtimes are whole seconds; a time far ahead (a clock set back, a damaged row) never comes.
                if dead < policy.now - policy.grace - 1 || dead > policy.now + 1e6 { reclaimable.append(owner) }
                continue
            }
            let ended = switch ProcessIdentity.liveness(of: process) {
            case .ended: true
            case .alive: false
            case .unknown: abs(policy.now - renewed) > policy.staleAfter
            }
            if ended {
                try db.execute(sql: "UPDATE reservation SET deadSince = ? WHERE owner = ?", arguments: [policy.now, owner])
            }
        }
        return reclaimable
    }
}
