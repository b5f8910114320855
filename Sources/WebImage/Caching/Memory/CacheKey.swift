/// A memory-cache key with its hash worked out once, by a cheaper function than the standard
/// library's SipHash over the whole string.
///
/// A look-up hashed its URL-length key with SipHash-1-3 (seed, 5 blocks, finalisation): a third
/// of a memory hit, measured with `perf`. Here eight bytes at a time go through a multiply and a
/// shift (seeded per process, so keys chosen from outside cannot be made to collide in advance),
/// and the dictionary's per-table seed is folded in with one more such round (the standard
/// library's one-shot hash of the eight bytes, SipHash again, was another tenth of a hit). Equal
/// strings have equal hashes; equality still compares the strings.
struct CacheKey: Hashable, Sendable {
    let string: String
    /// The hash of the string's UTF-8 bytes.
    let digest: UInt64

    init(_ string: String) {
        self.string = string
        // A native string's bytes are read in place; only a bridged one is copied (withUTF8 on a copy).
        if let digest = string.utf8.withContiguousStorageIfAvailable({ Self.digest(of: UnsafeRawBufferPointer($0)) }) {
            self.digest = digest
        } else {
            var copy = string
            digest = copy.withUTF8 { Self.digest(of: UnsafeRawBufferPointer($0)) }
        }
    }

    static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.digest == rhs.digest && lhs.string == rhs.string
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    /// What `Dictionary` calls: the digest with the table's seed folded in by one more round
    /// (no `Hasher` at all). An underscored requirement of `Hashable`, part of the standard
    /// library's stable ABI.
    func _rawHashValue(seed: Int) -> Int {
        var state = (digest ^ UInt64(UInt(bitPattern: seed))) &* Self.multiplier
        state ^= state >> 29
        return Int(truncatingIfNeeded: state)
    }

    private static var multiplier: UInt64 { 0x9E37_79B9_7F4A_7C15 }

    /// A random value per process.
    private static let seed = UInt64.random(in: .min ... .max)

    private static func digest(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state = seed ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            state = (state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* Self.multiplier
            state ^= state >> 29
            offset += 8
        }
        if offset < bytes.count {
            // The last eight bytes (overlapping the words before), or the few there are.
            var tail: UInt64 = 0
            if bytes.count >= 8 {
                tail = bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
            } else {
                for index in offset..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
            }
            state = (state ^ tail) &* Self.multiplier
            state ^= state >> 29
        }
        return state
    }
}
