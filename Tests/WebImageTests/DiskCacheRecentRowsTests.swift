import Foundation
import Testing
import WebImage
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
    /// last read it longer ago than the age limit.
    @Test func anEntryAnotherProcessKeptInUseIsNotExpiredFromAnOldRow() async throws {
        // Margins of 1.5 s (times the test time scale) either side of the age limit.
        let (here, elsewhere) = try twoCaches(.init(maxAge: TestTime.scaled(.seconds(4)), expireType: .accessDate))
        try await Task.sleep(for: TestTime.scaled(.milliseconds(2500)))
        #expect(elsewhere.entry(for: key)?.data == first)
        elsewhere.flush()
        try await Task.sleep(for: TestTime.scaled(.milliseconds(2500)))
        // 5 s since this cache's own hit, 2.5 s since the other's.
        #expect(here.entry(for: key)?.data == first)
        #expect(try here.statistics().count == 1)
    }

    @Test func removeAllHereForgetsEveryRow() throws {
        let (here, _) = try twoCaches()
        try here.removeAll()
        #expect(here.entry(for: key) == nil)
        #expect(try here.statistics().damaged == 0)
    }
}
