import Foundation
import Testing
import WebImage

@Suite("Disk cache: hashed names, atomic writes, limits")
struct DiskCacheTests {
    @Test func storesReadsAndSurvivesNewInstance() async throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        try await cache.store(Data([1, 2, 3]), for: "https://a.com/x.jpg")
        #expect(await cache.data(for: "https://a.com/x.jpg") == Data([1, 2, 3]))
        #expect(await cache.data(for: "https://a.com/y.jpg") == nil)

        let again = try DiskCache(directory: directory)
        #expect(await again.data(for: "https://a.com/x.jpg") == Data([1, 2, 3]))
        #expect(await again.statistics() == .init(count: 1, totalSize: 3))
    }

    @Test func fileNamesAreHashesWithTheKeysExtension() {
        let name = DiskCache.fileName(for: "https://a.com/path/photo.JPG?size=large")
        #expect(name.hasSuffix(".jpg"))
        #expect(name.count == 64 + 4)
        #expect(DiskCache.fileName(for: "no extension key").count == 64)
        #expect(DiskCache.fileName(for: "a") != DiskCache.fileName(for: "b"))
    }

    @Test func writesLeaveNoTemporaryFiles() async throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        for i in 0..<20 { try await cache.store(Data(repeating: UInt8(i), count: 1000), for: "k\(i)") }
        let incoming = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(".incoming").path)
        #expect(incoming.isEmpty)
        let visible = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        #expect(visible.count == 20)
    }

    @Test func leftoversOfAnInterruptedWriteAreNeverServedAndAreCleaned() async throws {
        let directory = temporaryDirectory()
        _ = try DiskCache(directory: directory)
        let partial = directory.appendingPathComponent(".incoming/partial-write")
        try Data(repeating: 9, count: 100).write(to: partial)
        let cache = try DiskCache(directory: directory)
        #expect(await cache.statistics().count == 0)
        #expect(!FileManager.default.fileExists(atPath: partial.path))
    }

    @Test func sizeLimitEvictsLeastRecentlyUsed() async throws {
        let cache = try DiskCache(directory: temporaryDirectory(), configuration: .init(sizeLimit: 10_000, trimRatio: 0.5))
        for i in 0..<8 {
            try await cache.store(Data(repeating: 1, count: 1000), for: "k\(i)")
            try await Task.sleep(for: .milliseconds(5))
        }
        _ = await cache.data(for: "k0")  // k0 becomes the most recent
        try await cache.store(Data(repeating: 2, count: 3000), for: "big")  // 11,000 > 10,000: trim to 5,000
        let stats = await cache.statistics()
        #expect(stats.totalSize <= 5000)
        #expect(await cache.data(for: "big") != nil)
        #expect(await cache.data(for: "k0") != nil)
        #expect(await cache.data(for: "k1") == nil)
    }

    @Test func expiredEntriesAreMisses() async throws {
        let cache = try DiskCache(directory: temporaryDirectory(), configuration: .init(maxAge: .milliseconds(50)))
        try await cache.store(Data([1]), for: "k")
        #expect(await cache.data(for: "k") != nil)
        try await Task.sleep(for: .milliseconds(120))
        #expect(await cache.data(for: "k") == nil)
        #expect(await cache.statistics().count == 0)
    }

    @Test func removedDirectoryIsRecreatedOnStore() async throws {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory)
        try await cache.store(Data([1]), for: "a")
        try FileManager.default.removeItem(at: directory)
        #expect(await cache.data(for: "a") == nil)
        try await cache.store(Data([2]), for: "b")
        #expect(await cache.data(for: "b") == Data([2]))
    }

    @Test func unwritableDirectoryIsATypedError() async throws {
        let file = temporaryDirectory().appendingPathComponent("plain-file")
        try Data([0]).write(to: file)
        #expect(throws: DiskCacheError.self) { _ = try DiskCache(directory: file.appendingPathComponent("cache")) }
    }

    @Test func removeAndRemoveAll() async throws {
        let cache = try DiskCache(directory: temporaryDirectory())
        try await cache.store(Data([1]), for: "a")
        try await cache.store(Data([2]), for: "b")
        await cache.remove(key: "a")
        #expect(await cache.data(for: "a") == nil)
        try await cache.removeAll()
        #expect(await cache.statistics() == .init(count: 0, totalSize: 0))
    }
}
