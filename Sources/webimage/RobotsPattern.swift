/// One robots.txt path pattern (RFC 9309 §2.2.3): matched from the start of the path, `*`
/// matches any run of bytes, a final `$` anchors it at the end.
///
/// Matching is linear: the pattern is cut at its `*`s into pieces; the first must start the
/// path, every later piece is found at its leftmost place after the previous one (with a KMP
/// table, so `*a*a*a…` against `aaaa…` never backtracks), and an anchored last piece must end
/// the path. Leftmost placement is enough for patterns with no other wildcard.
///
/// ```swift
/// RobotsPattern(Array("/*.jpg$".utf8))!.matches(Array("/a/b.jpg".utf8))  // true
/// ```
struct RobotsPattern: Sendable {
    /// The pieces between the `*`s, one after another (a hostile robots.txt of 3,900 patterns of
    /// 60 pieces each took 27 MB with an array and a table per piece; red team, stop 53).
    private let bytes: [UInt8]
    /// Each piece's KMP failure table, at the offsets of its bytes.
    private let failure: [UInt16]
    /// Where each piece ends in ``bytes``.
    private let ends: [UInt16]
    private let anchored: Bool
    /// The pattern's length in bytes, as written (the longest match wins).
    let length: Int

    /// `nil` for a pattern longer than ``RobotsRules/maxPatternBytes``.
    init?(_ pattern: [UInt8]) {
        guard pattern.count <= RobotsRules.maxPatternBytes else { return nil }
        length = pattern.count
        var body = pattern[...]
        anchored = body.last == UInt8(ascii: "$")
        if anchored { body = body.dropLast() }
        var bytes: [UInt8] = [], failure: [UInt16] = [], ends: [UInt16] = []
        for piece in body.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false) {
            bytes += piece
            failure += Self.failure(Array(piece))
            ends.append(UInt16(bytes.count))
        }
        (self.bytes, self.failure, self.ends) = (bytes, failure, ends)
    }

    /// Bytes the pattern keeps (for the run's bound on kept robots.txt rules).
    var byteCount: Int { bytes.count * 3 + ends.count * 2 + 96 }

    private func piece(_ index: Int) -> Range<Int> { (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index]) }

    func matches(_ path: [UInt8]) -> Bool {
        let first = piece(0)
        guard path.starts(with: bytes[first]) else { return false }
        if ends.count == 1 { return !anchored || path.count == first.count }
        var position = first.count
        for index in 1..<ends.count {
            let range = piece(index)
            if index == ends.count - 1, anchored {
                // The last piece must end the path, after what matched so far.
                return path.count - position >= range.count && path.suffix(range.count).elementsEqual(bytes[range])
            }
            guard let end = find(range, in: path, from: position) else { return false }
            position = end
        }
        return true
    }

    /// The index just past the leftmost occurrence of the piece at `range` in `path[from...]` (KMP).
    private func find(_ range: Range<Int>, in path: [UInt8], from start: Int) -> Int? {
        if range.isEmpty { return start }
        let base = range.lowerBound
        var matched = 0
        var index = start
        while index < path.count {
            while matched > 0, path[index] != bytes[base + matched] { matched = Int(failure[base + matched - 1]) }
            if path[index] == bytes[base + matched] { matched += 1 }
            index += 1
            if matched == range.count { return index }
        }
        return nil
    }

    /// KMP's failure table: for each prefix, the length of its longest proper border.
    private static func failure(_ needle: [UInt8]) -> [UInt16] {
        var table = [UInt16](repeating: 0, count: needle.count)
        var border = 0
        for index in needle.indices.dropFirst() {
            while border > 0, needle[index] != needle[border] { border = Int(table[border - 1]) }
            if needle[index] == needle[border] { border += 1 }
            table[index] = UInt16(border)
        }
        return table
    }
}
