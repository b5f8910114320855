import Testing
@testable import WebImage

/// The memory caches' key hash: every byte counts, equal strings agree, and lookups by key work
/// for short, long and non-ASCII keys.
@Suite("Cache key hash")
struct CacheKeyTests {
    @Test func everyByteChangesTheDigest() {
        for base in ["", "a", "1234567", "12345678", "https://example.com/images/photo.jpg?w=256", String(repeating: "x", count: 257)] {
            var digests: Set<UInt64> = [CacheKey(base).digest]
            var variants = 1
            for index in base.utf8.indices {
                var bytes = Array(base.utf8)
                let offset = base.utf8.distance(from: base.utf8.startIndex, to: index)
                for flip: UInt8 in [1, 0x40] {
                    bytes[offset] ^= flip
                    digests.insert(CacheKey(String(decoding: bytes, as: UTF8.self)).digest)
                    bytes[offset] ^= flip
                    variants += 1
                }
            }
            // Longer and shorter keys sharing the prefix differ too.
            digests.insert(CacheKey(base + "\0").digest)
            digests.insert(CacheKey(String(base.dropLast())).digest)
            variants += base.isEmpty ? 1 : 2
            #expect(digests.count == variants, "\(base.prefix(20))…: \(variants - digests.count) collisions")
        }
    }

    @Test func equalStringsAreEqualKeysAndFindTheirEntries() {
        let keys = ["", "é", "ünïcödé/κλειδί/鍵", "https://a.com/x.jpg", "https://a.com/x.jpg#"] + (0..<2000).map { "https://example.com/\($0).jpg" }
        var lru = CostLRU<Int>()
        for (n, key) in keys.enumerated() { lru.insert(n, cost: 1, forKey: key, expires: nil) }
        for (n, key) in keys.enumerated() {
            #expect(CacheKey(key) == CacheKey(String(decoding: Array(key.utf8), as: UTF8.self)))
            #expect(lru.value(forKey: key) == n)
        }
        #expect(lru.count == keys.count)
    }
}
