import Foundation
import Testing
import WebImage

/// `fetch`'s duplicate detection in bounded memory: the exact fingerprint table, the Bloom filter
/// after it (its measured false-positive rate against the computed one), and the two together.
@Suite("Duplicate detection: SeenURLs, FingerprintTable, BloomFilter")
struct SeenURLsTests {
    /// Random URLs of the shape lists have, distinct by construction (the counter).
    static func urls(_ count: Int, tag: String) -> [String] {
        (0..<count).map { "https://img\(UInt8.random(in: 0...99)).example.org/\(tag)/\($0)/\(UInt64.random(in: 0...UInt64.max)).jpg" }
    }

    @Test func theTableIsExactBelowItsCapAndSaysFullAtIt() {
        var table = FingerprintTable(maxSlots: 1 << 12)
        #expect(table.capacity == 3072)
        let keys = (0..<3072).map { _ in UInt64.random(in: 0...UInt64.max) }
        for (line, key) in keys.enumerated() { #expect(table.insert(key, value: UInt32(line + 1)) == .inserted) }
        for (line, key) in keys.enumerated() { #expect(table.insert(key, value: 9) == .present(UInt32(line + 1))) }
        #expect(table.insert(0xDEAD_BEEF, value: 1) == .full && table.count == 3072)
        #expect(table.byteCount == 4096 * 12, "never past maxSlots")
    }

    @Test func theDefaultFilterIsSizedForTenMillionURLsAtOneInAMillion() {
        let filter = BloomFilter(capacity: 10_000_000, falsePositiveRate: 1e-6)
        #expect(filter.hashCount == 20)
        #expect(filter.bitCount == 287_552_787)
        #expect(filter.byteCount < 36_000_000)
        let atCapacity = BloomFilter.falsePositiveRate(bits: filter.bitCount, hashes: filter.hashCount, items: 10_000_000)
        #expect(atCapacity <= 1e-6 && atCapacity > 0.99e-6, "\(atCapacity)")
    }

    @Test func theMeasuredFalsePositiveRateOnAMillionURLsIsTheComputedOne() {
        // 100,000 URLs in a filter for 100,000 at 1e-3, then a million other URLs asked: about
        // 1,000 false positives expected (the binomial's standard deviation is about 32).
        var filter = BloomFilter(capacity: 100_000, falsePositiveRate: 1e-3)
        let members = Self.urls(100_000, tag: "in").map(SeenURLs.fingerprint)
        for member in members { filter.insert(member) }
        #expect(members.allSatisfy(filter.contains), "no false negatives")
        let computed = BloomFilter.falsePositiveRate(bits: filter.bitCount, hashes: filter.hashCount, items: filter.count)
        #expect(computed <= 1e-3)
        var falsePositives = 0
        for url in Self.urls(1_000_000, tag: "out") where filter.contains(SeenURLs.fingerprint(url)) { falsePositives += 1 }
        let expected = computed * 1_000_000
        #expect(Double(falsePositives) < expected + 6 * expected.squareRoot(), "measured \(falsePositives), computed \(expected)")
        #expect(Double(falsePositives) > expected - 6 * expected.squareRoot(), "measured \(falsePositives), computed \(expected)")
    }

    @Test func atOneInAMillionAMillionURLsGiveAlmostNoFalsePositives() {
        var filter = BloomFilter(capacity: 1_000_000, falsePositiveRate: 1e-6)
        for _ in 0..<1_000_000 { filter.insert(UInt64.random(in: 0...UInt64.max)) }
        var falsePositives = 0
        for url in Self.urls(1_000_000, tag: "out") where filter.contains(SeenURLs.fingerprint(url)) { falsePositives += 1 }
        // About 1 expected; 8 or more has a chance under 1e-5.
        #expect(falsePositives < 8, "\(falsePositives)")
    }

    @Test func linesAreKeptExactlyThenApproximatelyThenNotAtAll() {
        // 768 exact entries, then a filter for 2,000, then nothing.
        var seen = SeenURLs(exactSlots: 1024, bloomCapacity: 2_000, falsePositiveRate: 1e-9)
        let urls = Self.urls(3_000, tag: "list")
        for (index, url) in urls.enumerated() { #expect(seen.check(url, line: index + 1) == .new, "\(index)") }
        #expect(seen.isApproximate && seen.unremembered == 3_000 - 768 - 2_000)
        for index in 0..<768 { #expect(seen.check(urls[index], line: 9_999) == .repeated(line: index + 1)) }
        for index in 768..<2_768 { #expect(seen.check(urls[index], line: 9_999) == .repeated(line: nil)) }
        // Past both: not remembered, so a repeat is fetched again (never a unique URL skipped).
        #expect(seen.check(urls[2_999], line: 9_999) == .new)
        #expect(seen.byteCount <= 1024 * 12 + 2_000 * 6)
        // A line number that does not fit 32 bits is kept without its number, and never traps.
        var huge = SeenURLs()
        #expect(huge.check("https://example.org/a", line: Int.max) == .new)
        #expect(huge.check("https://example.org/a", line: 1) == .repeated(line: nil))
        // The same bytes are the same URL; canonically equivalent but different bytes are not.
        #expect(huge.check("https://example.org/caf\u{E9}", line: 2) == .new)
        #expect(huge.check("https://example.org/cafe\u{301}", line: 3) == .new)
    }
}
