import Foundation
import Testing
import WebImage

@Suite("Memory cache: cost, count, AF purge, TTL, weak layer")
struct MemoryCacheTests {
    func image(bytes: Int) -> Image {
        Image(format: .png, pixelWidth: bytes / 4, pixelHeight: 1, pixels: [UInt8](repeating: 0, count: bytes), isOpaque: true)
    }

    @Test func storesAndReturns() {
        let cache = MemoryCache()
        cache["a"] = image(bytes: 400)
        #expect(cache["a"]?.pixelWidth == 100)
        #expect(cache["b"] == nil)
        #expect(cache.totalCost == 400)
        cache["a"] = nil
        #expect(cache["a"] == nil && cache.totalCost == 0 && cache.count == 0)
    }

    @Test func defaultsAreAFs() {
        let configuration = MemoryCache.Configuration(costLimit: 100_000_000)
        #expect(configuration.preferredCostAfterPurge == 60_000_000)
        #expect(configuration.maxEntryCostFraction == 0.1)
        #expect(MemoryCache.defaultCostLimit >= 16_000_000 && MemoryCache.defaultCostLimit <= 1_000_000_000)
    }

    @Test func defaultCapacityFollowsTheCgroupLimit() throws {
        let root = temporaryDirectory()
        let groups = root.appendingPathComponent("self-cgroup")
        func limit(_ files: [String: String], groups text: String) throws -> Int? {
            try? FileManager.default.removeItem(at: root.appendingPathComponent("fs"))
            for (path, value) in files {
                let url = root.appendingPathComponent("fs/\(path)")
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(value.utf8).write(to: url)
            }
            try Data(text.utf8).write(to: groups)
            return MemoryCache.cgroupMemoryLimit(root: root.appendingPathComponent("fs").path, selfCgroup: groups.path)
        }
        #expect(try limit(["app/memory.max": "536870912\n"], groups: "0::/app\n") == 536_870_912)  // v2, own group
        #expect(try limit(["memory.max": "max\n"], groups: "0::/\n") == nil)  // v2, unlimited
        #expect(try limit(["memory/job/memory.limit_in_bytes": "268435456\n"], groups: "4:memory:/job\n0::/\n") == 268_435_456)  // v1
        #expect(try limit(["memory/memory.limit_in_bytes": "9223372036854771712\n"], groups: "4:memory:/\n") == nil)  // v1 unlimited
        #expect(try limit([:], groups: "") == nil)  // no cgroup files: host RAM is not used
        #expect(MemoryCache.costLimit(forMemoryLimit: nil) == 100_000_000)
        #expect(MemoryCache.costLimit(forMemoryLimit: 512_000_000) == 128_000_000)
        #expect(MemoryCache.costLimit(forMemoryLimit: 32_000_000) == 16_000_000)
        #expect(MemoryCache.costLimit(forMemoryLimit: 64_000_000_000) == 1_000_000_000)
    }

    @Test func passingTheLimitPurgesLeastRecentDownToThePreferredCost() {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, preferredCostAfterPurge: 500, maxEntryCostFraction: 1))
        for key in ["a", "b", "c"] { cache[key] = image(bytes: 300) }  // 900: within the limit
        _ = cache["a"]  // a is now more recent than b and c
        #expect(cache.count == 3)
        cache["d"] = image(bytes: 300)  // 1200 > 1000: purge to ≤ 500
        #expect(cache.totalCost <= 500)
        #expect(cache["b"] == nil && cache["c"] == nil && cache["a"] == nil)
        #expect(cache["d"] != nil)
    }

    @Test func evictsOverCountLimit() {
        let cache = MemoryCache(configuration: .init(countLimit: 3))
        for key in ["a", "b", "c", "d"] { cache[key] = image(bytes: 4) }
        #expect(cache.count == 3)
        #expect(cache["a"] == nil && cache["d"] != nil)
    }

    @Test func refusesEntriesLargerThanTheFraction() {
        let cache = MemoryCache(configuration: .init(costLimit: 1000))
        cache["big"] = image(bytes: 200)  // 20 % > the default 10 %
        cache["ok"] = image(bytes: 100)
        #expect(cache["big"] == nil && cache["ok"] != nil)
    }

    @Test func replacingAKeyUpdatesCost() {
        let cache = MemoryCache()
        cache["a"] = image(bytes: 400)
        cache["a"] = image(bytes: 40)
        #expect(cache.totalCost == 40 && cache.count == 1)
    }

    @Test func timeToLiveExpiresEntries() async throws {
        let cache = MemoryCache(configuration: .init(timeToLive: .milliseconds(50)))
        cache["a"] = image(bytes: 4)
        #expect(cache["a"] != nil)
        try await Task.sleep(for: .milliseconds(120))
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
    }

    @Test func trimAndRemoveAll() {
        let cache = MemoryCache()
        for i in 0..<10 { cache["\(i)"] = image(bytes: 100) }
        cache.trim(toCost: 500)
        #expect(cache.count == 5 && cache["9"] != nil && cache["0"] == nil)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test func weakLayerFindsAnEvictedImageStillHeldElsewhere() throws {
        let cache = MemoryCache(configuration: .init(costLimit: 10_000, maxEntryCostFraction: 1))
        cache["held"] = image(bytes: 400)
        cache["dropped"] = image(bytes: 400)
        let held = try #require(cache.reference(forKey: "held"))
        cache.trim(toCost: 0)  // memory pressure: both evicted
        #expect(cache.count == 0)
        #expect(cache["dropped"] == nil)  // nobody held it
        #expect(cache["held"]?.pixelWidth == 100)  // found again through the weak layer…
        #expect(cache.count == 1)  // …and re-inserted
        #expect(cache.reference(forKey: "held") === held)
    }

    @Test func weakLayerLetsGoWhenTheHolderDoes() {
        let cache = MemoryCache(configuration: .init(costLimit: 10_000, maxEntryCostFraction: 1))
        do {
            let reference = ImageReference(image(bytes: 400))
            cache.insert(reference, forKey: "a")
            cache.trim(toCost: 0)
            #expect(cache["a"] != nil)
            cache.trim(toCost: 0)
        }
        #expect(cache["a"] == nil)  // the only holder is gone
    }

    @Test func weakLayerCanBeTurnedOff() {
        let cache = MemoryCache(configuration: .init(costLimit: 10_000, maxEntryCostFraction: 1, usesWeakLayer: false))
        cache["a"] = image(bytes: 400)
        let reference = cache.reference(forKey: "a")
        cache.trim(toCost: 0)
        #expect(cache["a"] == nil)
        #expect(reference?.image.pixelWidth == 100)
    }

    @Test func concurrentAccessKeepsInvariants() async {
        let cache = MemoryCache(configuration: .init(costLimit: 40_000, countLimit: 50))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<500 {
                        let key = "\((worker * 31 + i) % 120)"
                        if i % 3 == 0 { cache[key] = Image(format: .png, pixelWidth: 100, pixelHeight: 1, pixels: [UInt8](repeating: 0, count: 400), isOpaque: true) } else { _ = cache[key] }
                    }
                }
            }
        }
        #expect(cache.count <= 50)
        #expect(cache.totalCost == cache.count * 400)
    }

    @Test func memoryDataCacheKeepsBytesByLRU() {
        let data = MemoryDataCache(costLimit: 1000, maxEntryCostFraction: 0.5)
        data["a"] = Data(repeating: 1, count: 300)
        data["b"] = Data(repeating: 2, count: 300)
        data["huge"] = Data(repeating: 3, count: 600)  // over half the limit: not kept
        #expect(data["huge"] == nil)
        _ = data["a"]
        data["c"] = Data(repeating: 4, count: 300)
        data["d"] = Data(repeating: 5, count: 300)  // 1200 > 1000: purge to ≤ 600
        #expect(data.totalCost <= 600 && data["b"] == nil && data["d"] == Data(repeating: 5, count: 300))
        data.trim(toCost: 0)
        #expect(data.count == 0)
        data["e"] = Data([1])
        data.removeAll()
        #expect(data["e"] == nil && data.totalCost == 0)
    }
}
