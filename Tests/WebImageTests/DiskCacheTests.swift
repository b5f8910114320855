import Foundation
import Testing
import WebImage

@Suite("Disk cache: index, metadata, limits")
struct DiskCacheTests {
    func metadata(_ size: Int, etag: String? = "\"e\"") -> CacheMetadata {
        CacheMetadata(
            url: "https://a.com/x.jpg", contentType: "image/jpeg", byteCount: size, etag: etag,
            lastModified: "Sat, 01 Nov 2025 00:00:00 GMT", expiresAt: Date().addingTimeInterval(60), requiresRevalidation: true)
    }

    @Test func storesReadsAndSurvivesNewInstanceWithAllMetadata() throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        let stored = metadata(3)
        try cache.store(Data([1, 2, 3]), metadata: stored, for: "https://a.com/x.jpg")
        #expect(cache.entry(for: "https://a.com/x.jpg")?.data == Data([1, 2, 3]))
        #expect(cache.entry(for: "https://a.com/y.jpg") == nil)

        let again = try DiskCache(directory: directory)
        let entry = try #require(again.entry(for: "https://a.com/x.jpg"))
        #expect(entry.data == Data([1, 2, 3]))
        let read = entry.metadata
        #expect(read.url == stored.url && read.contentType == stored.contentType && read.byteCount == 3)
        #expect(read.etag == stored.etag && read.lastModified == stored.lastModified && read.requiresRevalidation)
        #expect(abs(read.expiresAt!.timeIntervalSince(stored.expiresAt!)) < 0.001)
        #expect(abs(read.storedAt.timeIntervalSince(stored.storedAt)) < 0.001)
        #expect(read.lastAccess >= stored.storedAt)
        let stats = try again.statistics()
        #expect(stats.count == 1 && stats.totalSize == 3)
    }

    @Test func updateMetadataKeepsTheBytes() throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        try cache.store(Data([7, 7]), metadata: metadata(2), for: "k")
        var refreshed = metadata(2, etag: "\"new\"")
        refreshed.requiresRevalidation = false
        refreshed.expiresAt = Date().addingTimeInterval(3600)
        cache.updateMetadata(refreshed, for: "k")
        cache.updateMetadata(refreshed, for: "absent")  // a no-op
        let entry = try #require(try DiskCache(directory: directory).entry(for: "k"))
        #expect(entry.data == Data([7, 7]) && entry.metadata.etag == "\"new\"")
        #expect(entry.metadata.isFresh(at: .now))
        #expect(try cache.statistics().count == 1)
    }

    @Test func writesLeaveNoTemporaryFilesAndOneFilePerEntry() throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        for i in 0..<20 { try cache.store(Data(repeating: UInt8(i), count: 1000), for: "k\(i % 10)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(".incoming").path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("files").path).count == 10)
        #expect(cache.entry(for: "k3")?.data == Data(repeating: 13, count: 1000))
    }

    @Test func sizeLimitEvictsLeastRecentlyUsedInTheStore() throws {
        let cache = try DiskCache(directory: temporaryDirectory(), configuration: .init(sizeLimit: 10_000, trimRatio: 0.5))
        for i in 0..<8 { try cache.store(Data(repeating: 1, count: 1000), for: "k\(i)") }
        _ = cache.entry(for: "k0")  // k0 becomes the most recent
        try cache.store(Data(repeating: 2, count: 3000), for: "big")  // 11,000 > 10,000: down to 5,000
        let stats = try cache.statistics()
        #expect(stats.totalSize <= 5000 && stats.evictions > 0)
        #expect(cache.entry(for: "big") != nil)
        #expect(cache.entry(for: "k0") != nil)
        #expect(cache.entry(for: "k1") == nil)
        #expect(throws: DiskCacheError.entryTooLarge(bytes: 10_001, limit: 10_000)) {
            try cache.store(Data(repeating: 0, count: 10_001), for: "huge")
        }
    }

    // The age tests use seconds, not milliseconds: the suites run in parallel on two loaded
    // cores, and a 150 ms sleep was seen to last over 300 ms.
    @Test func ageLimitByLastAccess() async throws {
        let cache = try DiskCache(directory: temporaryDirectory(), configuration: .init(maxAge: .seconds(2)))
        let stored = Date()
        try await cache.store(Data([1]), for: "used")
        try await cache.store(Data([2]), for: "unused")
        var lastHit: Date? = stored  // expectations only where the machine kept the gaps short
        while Date().timeIntervalSince(stored) < 2.5 {
            try await Task.sleep(for: .milliseconds(500))
            let before = Date()
            let entry = cache.entry(for: "used")
            if let lastHit, before.timeIntervalSince(lastHit) < 1.8 { #expect(entry != nil) }  // each access restarts its age
            lastHit = entry == nil ? nil : before
        }
        #expect(cache.entry(for: "unused") == nil)
        if let lastHit, Date().timeIntervalSince(lastHit) < 1.8 { #expect(try cache.statistics().count == 1) }
    }

    @Test func ageLimitByStoredDateIgnoresAccess() async throws {
        let cache = try DiskCache(directory: temporaryDirectory(), configuration: .init(maxAge: .seconds(1.5), expireType: .storedDate))
        let stored = Date()
        try await cache.store(Data([1]), for: "k")
        try await Task.sleep(for: .milliseconds(500))
        if Date().timeIntervalSince(stored) < 1.3 { #expect(cache.entry(for: "k") != nil) }
        try await Task.sleep(for: .milliseconds(1200))
        #expect(cache.entry(for: "k") == nil)
    }

    @Test func trimAppliesAgeAndSizeNow() async throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        for i in 0..<10 { try await cache.store(Data(repeating: 1, count: 100), for: "k\(i)") }
        // Margins for a loaded machine: the old entries are 1.5 s old, the recent one far younger than 1 s.
        try await Task.sleep(for: .milliseconds(1500))
        try await cache.store(Data(repeating: 1, count: 100), for: "recent")
        let aged = try DiskCache(directory: directory, configuration: .init(maxAge: .seconds(1)))
        let report = try aged.trim()
        #expect(report.expired == 10 && report.evicted == 0)
        try await cache.store(Data(repeating: 1, count: 100), for: "second")
        #expect(try cache.trim(toSize: 100).evicted == 1)
        #expect(try cache.statistics().count == 1 && cache.entry(for: "second") != nil)
    }

    @Test func hitsAndMissesAreCountedAcrossInstances() throws {
        let directory = temporaryDirectory()
        do {
            let cache = try DiskCache(directory: directory)
            try cache.store(Data([1]), for: "a")
            _ = cache.entry(for: "a")
            _ = cache.entry(for: "b")
        }  // deinit writes the batched counts
        let cache = try DiskCache(directory: directory)
        _ = cache.entry(for: "a")
        let stats = try cache.statistics()
        #expect(stats.hits == 2 && stats.misses == 1)
        #expect(stats.oldestStored != nil && stats.oldestAccess != nil)
    }

    @Test func removedDirectoryIsRecreatedOnStore() throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        try cache.store(Data([1]), for: "a")
        try FileManager.default.removeItem(at: directory)
        #expect(cache.entry(for: "a") == nil)
        try cache.store(Data([2]), for: "b")
        #expect(cache.entry(for: "b")?.data == Data([2]))
    }

    @Test func anUnusedCacheLeavesOnlyItsFolder() throws {
        let directory = temporaryDirectory()
        do { _ = try DiskCache(directory: directory) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test func unwritableDirectoryIsATypedError() throws {
        let file = temporaryDirectory().appendingPathComponent("plain-file")
        try Data([0]).write(to: file)
        #expect(throws: DiskCacheError.self) { _ = try DiskCache(directory: file.appendingPathComponent("cache")) }
    }

    @Test func aFailingWriteIsATypedErrorAndStoresNothing() throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        let incoming = directory.appendingPathComponent(".incoming")
        try FileManager.default.removeItem(at: incoming)
        try Data([0]).write(to: incoming)  // a file where the temporary folder should be
        #expect {
            try cache.store(Data([1]), for: "a")
        } throws: { error in
            guard case .writeFailed = error as? DiskCacheError else { return false }
            return true
        }
        #expect(cache.entry(for: "a") == nil)
        #expect(try cache.statistics().count == 0)
    }

    @Test func removeAndRemoveAll() throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        try cache.store(Data([1]), for: "a")
        try cache.store(Data([2]), for: "b")
        cache.remove(key: "a")
        #expect(cache.entry(for: "a") == nil)
        try cache.removeAll()
        let stats = try cache.statistics()
        #expect(stats.count == 0 && stats.totalSize == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("files").path).isEmpty)
    }

    @Test func cacheTypes() {
        #expect(ImageCacheType.all.includesMemory && ImageCacheType.all.includesDisk)
        #expect(ImageCacheType.memory.includesMemory && !ImageCacheType.memory.includesDisk)
        #expect(!ImageCacheType.disk.includesMemory && ImageCacheType.disk.includesDisk)
        #expect(!ImageCacheType.none.includesMemory && !ImageCacheType.none.includesDisk)
    }
}
