/// The marker segments of a JPEG before its first scan, as the header readers walk them: junk
/// between segments is skipped (as libjpeg does), and a segment running past the end of the data
/// is handed over cut to what is there.
enum JPEGSegments {
    /// Calls `body` with each segment's marker, the range of its payload within `bytes` (after
    /// the two length bytes, cut at the end of the data) and whether the payload is whole; stops
    /// at the start of scan, the end of the image, the end of the data, or when `body` says `false`.
    static func walk(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (_ marker: UInt8, _ payload: Range<Int>, _ isWhole: Bool) -> Bool) {
        var i = 2, steps = 0
        while i + 4 <= bytes.count {
            // Millions of empty segments or fill bytes: a cancelled read stops here (stop 52).
            steps += 1
            if steps & 0xFFF == 0, Task.isCancelled { return }
            guard bytes[i] == 0xFF else { i += 1; continue }
            let marker = bytes[i + 1]
            if marker == 0xFF || marker == 0x01 || (0xD0...0xD8).contains(marker) { i += marker == 0xFF ? 1 : 2; continue }
            if marker == 0xDA || marker == 0xD9 { return }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            let start = i + 4, end = i + 2 + max(length, 2)
            guard body(marker, start..<min(max(end, start), bytes.count), end <= bytes.count) else { return }
            i = end
        }
    }

    /// `true` when the payload at `range` begins with `prefix`.
    static func payload(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, startsWith prefix: [UInt8]) -> Bool {
        range.count >= prefix.count && bytes[range.lowerBound..<(range.lowerBound + prefix.count)].elementsEqual(prefix)
    }
}
