import Foundation

/// A fixed-size Bloom filter over 64-bit fingerprints: sized once for `capacity` items at a
/// false-positive rate, it never grows.
///
/// `contains` never misses an inserted fingerprint; it wrongly answers `true` for one never
/// inserted with probability ``falsePositiveRate(bits:hashes:items:)`` — about the design rate
/// once `capacity` items are in, less before. The `k` bit positions come from the fingerprint by
/// double hashing (Kirsch and Mitzenmacher): `h1 + i·h2`, each mapped onto the bits by a
/// multiply-shift; `h2` is the fingerprint through SplitMix64's finalizer, so a fingerprint that
/// is already uniformly random (a keyed hash) is all it needs.
///
/// ```swift
/// var seen = BloomFilter(capacity: 10_000_000, falsePositiveRate: 1e-6)  // 34.3 MiB, 20 hashes
/// if !seen.insert(fingerprint) { /* certainly new */ }
/// ```
package struct BloomFilter: Sendable {
    package let bitCount: Int
    package let hashCount: Int
    package let capacity: Int
    private var words: [UInt64]
    /// Fingerprints inserted that were not (as far as the filter could tell) in it already.
    package private(set) var count = 0

    /// A filter for `capacity` items at `falsePositiveRate` p (0 < p < 1): the optimal number of
    /// hashes `k = −log₂ p`, rounded, then the fewest bits `m = −k·n / ln(1 − p^(1/k))` at which
    /// `n` items give at most p with that `k` (about `−n·ln p / ln²2`: 28.8 bits an item at 1e-6).
    package init(capacity: Int, falsePositiveRate: Double) {
        precondition(capacity > 0 && falsePositiveRate > 0 && falsePositiveRate < 1, "a Bloom filter needs items and a rate in (0, 1)")
        let hashes = max(1, Int((-Foundation.log2(falsePositiveRate)).rounded()))
        let bits = (-Double(hashes) * Double(capacity) / Foundation.log(1 - pow(falsePositiveRate, 1 / Double(hashes)))).rounded(.up)
        hashCount = hashes
        bitCount = max(64, Int(bits))
        self.capacity = capacity
        words = [UInt64](repeating: 0, count: (bitCount + 63) / 64)
    }

    /// The memory the bits take.
    package var byteCount: Int { words.count * 8 }

    /// The chance that a fingerprint never inserted is reported present, with `items` inserted:
    /// `(1 − e^(−k·n/m))^k`.
    package static func falsePositiveRate(bits: Int, hashes: Int, items: Int) -> Double {
        pow(1 - exp(-Double(hashes) * Double(items) / Double(bits)), Double(hashes))
    }

    /// The rate now, for the items inserted so far.
    package var currentFalsePositiveRate: Double { Self.falsePositiveRate(bits: bitCount, hashes: hashCount, items: count) }

    package func contains(_ fingerprint: UInt64) -> Bool {
        var probe = Probe(fingerprint, bits: bitCount)
        for _ in 0..<hashCount {
            let bit = probe.next()
            if words[bit >> 6] & (1 << UInt64(bit & 63)) == 0 { return false }
        }
        return true
    }

    /// Sets the fingerprint's bits; returns whether they were all set already (the fingerprint
    /// was, or looked, present).
    @discardableResult
    package mutating func insert(_ fingerprint: UInt64) -> Bool {
        var probe = Probe(fingerprint, bits: bitCount)
        var present = true
        for _ in 0..<hashCount {
            let bit = probe.next()
            let mask: UInt64 = 1 << UInt64(bit & 63)
            if words[bit >> 6] & mask == 0 {
                present = false
                words[bit >> 6] |= mask
            }
        }
        if !present { count += 1 }
        return present
    }

    /// The bit positions of one fingerprint.
    private struct Probe {
        var position: UInt64
        let step: UInt64
        let bits: UInt64

        init(_ fingerprint: UInt64, bits: Int) {
            position = fingerprint
            step = Self.mix(fingerprint) | 1
            self.bits = UInt64(bits)
        }

        mutating func next() -> Int {
            // Multiply-shift maps the 64-bit value onto 0..<bits without a division.
            let bit = position.multipliedFullWidth(by: bits).high
            position &+= step
            return Int(bit)
        }

        /// SplitMix64's finalizer: every input bit changes about half the output bits.
        static func mix(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

}
