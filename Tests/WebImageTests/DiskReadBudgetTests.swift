import Foundation
import GRDB
import Testing
import WebImage
import WebImageOrigin

/// A disk-cache hit makes room in the memory budget before it reads the file (the index knows
/// its size), so a load that waits for room holds none of its bytes while it waits.
@Suite("Disk reads in the memory budget")
struct DiskReadBudgetTests {
    /// A real disk cache that counts the reads of its entries.
    final class CountingCache: DataCaching {
        let disk: DiskCache
        let reads = Locked(0)
        init(disk: DiskCache) { self.disk = disk }
        func entry(for key: String) async -> DataCacheEntry? {
            reads.withLock { $0 += 1 }
            return disk.entry(for: key)
        }
        func byteCount(for key: String) async -> CachedByteCount { await disk.byteCount(for: key) }
        func store(_ data: Data, metadata: CacheMetadata, for key: String) async throws { try await disk.store(data, metadata: metadata, for: key) }
        func updateMetadata(_ metadata: CacheMetadata, for key: String) async { await disk.updateMetadata(metadata, for: key) }
        func remove(key: String) async { await disk.remove(key: key) }
        func removeAll() async throws { try await disk.removeAll() }
    }

    @Test func aHitWaitsForRoomBeforeItReadsTheFile() async throws {
        let png = try BodyBudgetTests.noisePNG(side: 100)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withOrigin(files: ["noise.png": png]) { origin in
            let budget = MemoryBudget(limit: 64 << 20)
            let cache = CountingCache(disk: try DiskCache(directory: directory))
            let pipeline = BodyBudgetTests.pipeline(budget, dataCache: cache)
            let request = ImageRequest(url: origin.imageURL("noise.png")).options(.waitStoreCache)
            _ = try await pipeline.data(for: request)
            #expect(await cache.disk.byteCount(for: request.dataKey) == .bytes(png.count))
            let readsBefore = cache.reads.withLock { $0 }
            // The first load's bytes leave the budget once its response and its cache write end
            // (under load, after this line: a reservation of all but 1000 bytes was refused then).
            #expect(await eventually { budget.inUse == 0 })
            // The budget is full: the next hit must wait, and must not have read the file yet.
            let work = try await budget.reserve(budget.limit - 1000, waitingAtMost: .zero)
            let load = Task { try await pipeline.data(for: request).data == png }
            #expect(await eventually { budget.waitingCount == 1 })
            #expect(cache.reads.withLock { $0 } == readsBefore, "the file was read before room was made for it")
            #expect(budget.encodedInUse == png.count, "the waiting hit counts as encoded bytes, not yet held")
            work.release()
            #expect(try await load.value)
            #expect(cache.reads.withLock { $0 } == readsBefore + 1)
            #expect(await eventually { budget.inUse == 0 })
        }
    }

    /// An index row whose size no budget could hold (damaged, or written by something else) is
    /// not taken at its word: the read finds the file does not match, the entry is dropped as
    /// damaged, and the load goes to the network instead of failing over budget.
    @Test func anIndexSizeNoBudgetCouldHoldIsAMissNotARefusal() async throws {
        let png = try BodyBudgetTests.noisePNG(side: 100)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withOrigin(files: ["noise.png": png]) { origin in
            let budget = MemoryBudget(limit: 64 << 20)
            let request = ImageRequest(url: origin.imageURL("noise.png")).options(.waitStoreCache)
            _ = try await BodyBudgetTests.pipeline(budget, dataCache: try DiskCache(directory: directory)).data(for: request)
            var configuration = GRDB.Configuration()
            configuration.busyMode = .timeout(5)
            let index = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path, configuration: configuration)
            try await index.write { try $0.execute(sql: "UPDATE entry SET size = ?", arguments: [Int64.max]) }
            try index.close()
            // A new cache instance, so no row is remembered from the first load.
            let pipeline = BodyBudgetTests.pipeline(budget, wait: .milliseconds(200), dataCache: try DiskCache(directory: directory))
            let requestsBefore = origin.requests.count
            let loaded = try await pipeline.data(for: request)
            #expect(loaded.data == png && loaded.source == .network)
            #expect(origin.requests.count == requestsBefore + 1)
        }
    }

    @Test func aMissReservesNothingAndDoesNotWaitInLine() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let budget = MemoryBudget(limit: 64 << 20)
        let cache = CountingCache(disk: try DiskCache(directory: directory))
        let pipeline = BodyBudgetTests.pipeline(budget, wait: .milliseconds(200), dataCache: cache)
        let work = try await budget.reserve(budget.limit - 1000, waitingAtMost: .zero)
        defer { work.release() }
        // Nothing cached and only the cache asked: a miss at once, not a wait for room then a miss.
        let request = ImageRequest(url: URL(string: "http://127.0.0.1:9/absent.png")!).options(.fromCacheOnly)
        await #expect(throws: ImagePipelineError.notCached) { try await pipeline.data(for: request).data.count }
        #expect(budget.waitingCount == 0)
        #expect(cache.reads.withLock { $0 } == 0, "an entry the index says it does not have was read")
    }
}
