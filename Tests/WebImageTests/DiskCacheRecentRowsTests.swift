import Foundation
import GRDB
import Testing
@testable import WebImage
import WebImageOrigin

/// A repeated hit takes its index row from memory. Two caches on one folder stand for two
/// processes: whatever one does to an entry the other has read, the other never serves a
/// replaced or removed entry and never mistakes such a change for damage.
@Suite("Disk cache: rows remembered after a hit")
struct DiskCacheRecentRowsTests {
    let key = "https://a.com/photo.jpg"
    let first = CacheSamples.bytes(for: "photo", version: 1)
    let second = CacheSamples.bytes(for: "photo", version: 2)

    /// Two caches on one folder; `here` has stored `first` and hit it once (its row remembered).
    func twoCaches(_ configuration: DiskCache.Configuration = .init(), name: String = #function) throws -> (here: DiskCache, elsewhere: DiskCache) {
        let directory = temporaryDirectory(name)
        let here = try DiskCache(directory: directory, configuration: configuration)
        let elsewhere = try DiskCache(directory: directory, configuration: configuration)
        try here.store(first, for: key)
        #expect(here.entry(for: key)?.data == first)
        return (here, elsewhere)
    }

    @Test func anEntryReplacedElsewhereIsReadAnew() throws {
        let (here, elsewhere) = try twoCaches()
        try elsewhere.store(second, for: key)
        #expect(here.entry(for: key)?.data == second)
        #expect(here.entry(for: key)?.data == second)
        #expect(try here.statistics().damaged == 0)
    }

    @Test func anEntryRemovedElsewhereIsAMissNotDamage() throws {
        let (here, elsewhere) = try twoCaches()
        elsewhere.remove(key: key)
        #expect(here.entry(for: key) == nil)
        let statistics = try here.statistics()
        #expect(statistics.damaged == 0 && statistics.count == 0)
    }

    @Test func anEntryEvictedElsewhereIsAMissNotDamage() throws {
        let (here, elsewhere) = try twoCaches()
        #expect(try elsewhere.trim(toSize: 0).evicted == 1)
        #expect(here.entry(for: key) == nil)
        #expect(try here.statistics().damaged == 0)
    }

    @Test func aMetadataUpdateIsSeenAtOnce() throws {
        let (here, _) = try twoCaches()
        var refreshed = CacheMetadata(byteCount: first.count)
        refreshed.etag = "\"v2\""
        here.updateMetadata(refreshed, for: key)
        #expect(here.entry(for: key)?.metadata.etag == "\"v2\"")
    }

    /// Expiry by access date: another process's recent hit keeps the entry, though this process
    /// last read it longer ago than the age limit. The other process's hit is written into the
    /// index as its batched usage flush writes it, and read back with no suspension in between, so
    /// the test needs no timing but a lower bound (a sleep never ends early).
    @Test func anEntryAnotherProcessKeptInUseIsNotExpiredFromAnOldRow() async throws {
        let directory = temporaryDirectory()
        let here = try DiskCache(directory: directory, configuration: .init(maxAge: .seconds(2), expireType: .accessDate))
        try await here.store(first, for: key)
        #expect(await here.entry(for: key)?.data == first)  // remembered, last read now
        try await Task.sleep(for: .milliseconds(2500))
        #expect(try hitElsewhereThenRead(here, directory: directory) == first)
        #expect(try here.statistics().count == 1)
    }

    /// Sets the entry's access time in the index to now, as another process's usage flush does,
    /// then reads the entry here at once (synchronous: nothing runs in between).
    private func hitElsewhereThenRead(_ cache: DiskCache, directory: URL) throws -> Data? {
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(5)
        let index = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path, configuration: configuration)
        try index.write { db in
            try db.execute(sql: "UPDATE entry SET lastAccess = ? WHERE key = ?", arguments: [Date().timeIntervalSince1970, key])
        }
        return cache.entry(for: key)?.data
    }

    @Test func removeAllHereForgetsEveryRow() throws {
        let (here, _) = try twoCaches()
        try here.removeAll()
        #expect(here.entry(for: key) == nil)
        #expect(try here.statistics().damaged == 0)
    }
}

/// A remembered row is trusted for a while only: after its time to live the index is read again
/// (what bounds how long another process's metadata update or a crashed writer's leftover file
/// can go unseen).
@Suite("Disk cache: remembered rows expire")
struct RecentRowsExpiryTests {
    @Test func aRowIsForgottenAfterItsTimeToLive() async throws {
        let rows = RecentRows(limit: 8, timeToLive: .milliseconds(200))
        let row = IndexRow(key: "k", file: "f", size: 1, checksum: 0, metadata: CacheMetadata(byteCount: 1))
        rows.remember(row)
        #expect(rows["k"] == row)
        try await Task.sleep(for: .milliseconds(300))  // never ends early
        #expect(rows["k"] == nil)
    }
}
