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
    private struct Piece: Sendable {
        var bytes: [UInt8]
        var failure: [Int]
    }

    private let pieces: [Piece]
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
        pieces = body.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).map { Piece(bytes: Array($0), failure: Self.failure(Array($0))) }
    }

    func matches(_ path: [UInt8]) -> Bool {
        guard let first = pieces.first, path.starts(with: first.bytes) else { return false }
        if pieces.count == 1 { return !anchored || path.count == first.bytes.count }
        var position = first.bytes.count
        for (index, piece) in pieces.enumerated().dropFirst() {
            if index == pieces.count - 1, anchored {
                // The last piece must end the path, after what matched so far.
                return path.count - position >= piece.bytes.count && path.suffix(piece.bytes.count).elementsEqual(piece.bytes)
            }
            guard let end = Self.find(piece, in: path, from: position) else { return false }
            position = end
        }
        return true
    }

    /// The index just past the leftmost occurrence of `piece` in `path[from...]` (KMP).
    private static func find(_ piece: Piece, in path: [UInt8], from start: Int) -> Int? {
        let needle = piece.bytes
        if needle.isEmpty { return start }
        var matched = 0
        var index = start
        while index < path.count {
            while matched > 0, path[index] != needle[matched] { matched = piece.failure[matched - 1] }
            if path[index] == needle[matched] { matched += 1 }
            index += 1
            if matched == needle.count { return index }
        }
        return nil
    }

    /// KMP's failure table: for each prefix, the length of its longest proper border.
    private static func failure(_ needle: [UInt8]) -> [Int] {
        var table = [Int](repeating: 0, count: needle.count)
        var border = 0
        for index in needle.indices.dropFirst() {
            while border > 0, needle[index] != needle[border] { border = table[border - 1] }
            if needle[index] == needle[border] { border += 1 }
            table[index] = border
        }
        return table
    }
}
