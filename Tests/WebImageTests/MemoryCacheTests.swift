import Foundation
import Testing
import WebImage

@Suite("Memory cache: cost, count, LRU")
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

    @Test func evictsLeastRecentlyUsedOverCostLimit() {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, maxEntryCostFraction: 1))
        cache["a"] = image(bytes: 400)
        cache["b"] = image(bytes: 400)
        _ = cache["a"]  // a is now more recent than b
        cache["c"] = image(bytes: 400)
        #expect(cache["b"] == nil)
        #expect(cache["a"] != nil && cache["c"] != nil)
        #expect(cache.totalCost == 800)
    }

    @Test func evictsOverCountLimit() {
        let cache = MemoryCache(configuration: .init(countLimit: 3))
        for key in ["a", "b", "c", "d"] { cache[key] = image(bytes: 4) }
        #expect(cache.count == 3)
        #expect(cache["a"] == nil && cache["d"] != nil)
    }

    @Test func refusesEntriesLargerThanTheFraction() {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, maxEntryCostFraction: 0.25))
        cache["big"] = image(bytes: 400)
        cache["ok"] = image(bytes: 200)
        #expect(cache["big"] == nil && cache["ok"] != nil)
    }

    @Test func replacingAKeyUpdatesCost() {
        let cache = MemoryCache()
        cache["a"] = image(bytes: 400)
        cache["a"] = image(bytes: 40)
        #expect(cache.totalCost == 40 && cache.count == 1)
    }

    @Test func trimAndRemoveAll() {
        let cache = MemoryCache()
        for i in 0..<10 { cache["\(i)"] = image(bytes: 100) }
        cache.trim(toCost: 500)
        #expect(cache.count == 5 && cache["9"] != nil && cache["0"] == nil)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
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
}
