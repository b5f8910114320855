/// An item's data as the libraries read it: its extents, one after another (libheif copies them
/// into one buffer), with the codec configuration's units before them. Reads past the end give
/// `nil`.
///
/// ```swift
/// let data = ISOItemBytes(bytes, [prefix, extent])
/// data.bigEndian(at: 0, count: 4)  // the first unit's length
/// ```
struct ISOItemBytes {
    private let bytes: UnsafeRawBufferPointer
    private let ranges: [Range<Int>]
    /// Where each range starts in the joined data.
    private let starts: [Int]
    let count: Int

    init(_ bytes: UnsafeRawBufferPointer, _ ranges: [Range<Int>]) {
        self.bytes = bytes
        self.ranges = ranges
        var starts: [Int] = [], total = 0
        for range in ranges {
            starts.append(total)
            total += range.count
        }
        self.starts = starts
        count = total
    }

    subscript(_ index: Int) -> UInt8? {
        guard index >= 0, index < count else { return nil }
        var low = 0, high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return bytes[ranges[low].lowerBound + index - starts[low]]
    }

    /// `count` bytes (at most 8) at `index` as a big-endian number.
    func bigEndian(at index: Int, count: Int) -> Int? {
        var value = 0
        for offset in 0..<count {
            guard let byte = self[index + offset] else { return nil }
            value = value << 8 | Int(byte)
        }
        return value
    }

    /// Up to `limit` bytes from `index`, fewer at the end.
    func prefix(from index: Int, limit: Int) -> [UInt8] {
        guard index >= 0, index < count else { return [] }
        return (index..<min(count, index + max(limit, 0))).compactMap { self[$0] }
    }
}
