/// An exact map from 64-bit fingerprints to 32-bit values (a list's line numbers) in 12 bytes a
/// slot, that grows by doubling up to `maxSlots` and then says it is full rather than grow.
///
/// Open addressing with linear probing, filled to at most three quarters; fingerprint 0 marks an
/// empty slot, so a fingerprint of 0 is stored as 1 (two fingerprints then collide, which a
/// 64-bit hash makes as unlikely as any other collision).
///
/// ```swift
/// var lines = FingerprintTable(maxSlots: 1 << 21)  // 1,572,864 entries, 24 MiB at most
/// if case .present(let line) = lines.insert(fingerprint, value: 7) { print("seen on line \(line)") }
/// ```
package struct FingerprintTable: Sendable {
    package enum Insertion: Equatable, Sendable {
        case inserted
        /// The fingerprint was there, with this value (kept).
        case present(UInt32)
        /// The fingerprint is new and there is no room for it.
        case full
    }

    private var keys: [UInt64]
    private var values: [UInt32]
    package let maxSlots: Int
    package private(set) var count = 0

    /// `maxSlots` is rounded up to a power of two (at least 16); the table starts at 1,024 slots
    /// or `maxSlots`, whichever is less.
    package init(maxSlots: Int) {
        var limit = 16
        while limit < maxSlots { limit <<= 1 }
        self.maxSlots = limit
        let start = min(1024, limit)
        keys = [UInt64](repeating: 0, count: start)
        values = [UInt32](repeating: 0, count: start)
    }

    /// Entries the table takes before it is full: three quarters of `maxSlots`.
    package var capacity: Int { maxSlots / 4 * 3 }

    /// The memory the slots take now.
    package var byteCount: Int { keys.count * 12 }

    package func value(of fingerprint: UInt64) -> UInt32? {
        let key = fingerprint == 0 ? 1 : fingerprint
        var slot = Int(truncatingIfNeeded: key) & (keys.count - 1)
        while keys[slot] != 0 {
            if keys[slot] == key { return values[slot] }
            slot = (slot + 1) & (keys.count - 1)
        }
        return nil
    }

    package mutating func insert(_ fingerprint: UInt64, value: UInt32) -> Insertion {
        if let kept = self.value(of: fingerprint) { return .present(kept) }
        if (count + 1) * 4 > keys.count * 3 {
            guard keys.count < maxSlots else { return .full }
            grow()
        }
        place(fingerprint == 0 ? 1 : fingerprint, value)
        count += 1
        return .inserted
    }

    private mutating func place(_ key: UInt64, _ value: UInt32) {
        var slot = Int(truncatingIfNeeded: key) & (keys.count - 1)
        while keys[slot] != 0 { slot = (slot + 1) & (keys.count - 1) }
        keys[slot] = key
        values[slot] = value
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        keys = [UInt64](repeating: 0, count: oldKeys.count * 2)
        values = [UInt32](repeating: 0, count: oldKeys.count * 2)
        for (key, value) in zip(oldKeys, oldValues) where key != 0 { place(key, value) }
    }
}
