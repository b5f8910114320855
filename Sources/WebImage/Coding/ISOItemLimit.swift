/// The item count of a HEIF-family file (HEIC, HEIF, AVIF), read from its `meta` box before
/// libheif or libavif parse it: both take time that grows with the square of the items (libheif
/// 1.15 in its context parse, libavif 0.11 in its item look-ups), so 10,000 items that all share
/// the primary image's data — a 560 KB HEIC — cost 7 s of CPU in the header read and 17 s in the
/// decode, in C where no deadline reaches (red team, stop 51). A camera's or a phone's file has
/// tens to a few hundred items (grid tiles, thumbnails, gain maps, metadata).
///
/// ```swift
/// try ISOItemLimit.check(bytes, format: .heic)  // .corrupt when the file declares over 2,000 items
/// ```
enum ISOItemLimit {
    /// Items a file may declare, in `iinf`, `iloc` or `ipma`.
    static let maxItems = 2_000

    static func check(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws(ImageDecodingError) {
        let items = count(bytes)
        if Task.isCancelled { throw .cancelled }
        guard items <= maxItems else {
            throw .corrupt(format: format, reason: "the file declares \(items) items, more than \(maxItems)")
        }
    }

    /// The largest entry count of the `iinf`, `iloc` and `ipma` boxes under the top-level
    /// `meta` boxes (0 when there are none, or when the boxes do not fit: the libraries judge
    /// those).
    static func count(_ bytes: UnsafeRawBufferPointer) -> Int {
        var largest = 0
        forEachBox(bytes, in: 0..<bytes.count) { type, body in
            guard type == meta, body.count >= 4 else { return }
            forEachBox(bytes, in: (body.lowerBound + 4)..<body.upperBound) { type, body in
                if type == iprp {
                    forEachBox(bytes, in: body) { type, body in
                        if type == ipma { largest = max(largest, entryCount(bytes, body, wide: true)) }
                    }
                } else if type == iinf, body.count >= 4 {
                    largest = max(largest, entryCount(bytes, body, wide: bytes[body.lowerBound] != 0))
                } else if type == iloc, body.count >= 6 {
                    // After the version and flags, two bytes of field sizes, then the count.
                    let wide = bytes[body.lowerBound] >= 2
                    largest = max(largest, entryCount(bytes, (body.lowerBound + 2)..<body.upperBound, wide: wide))
                }
            }
        }
        return largest
    }

    /// A full box's count after its version and flags: 16 bits, or 32 when `wide`.
    private static func entryCount(_ bytes: UnsafeRawBufferPointer, _ body: Range<Int>, wide: Bool) -> Int {
        let start = body.lowerBound + 4
        guard body.upperBound - start >= (wide ? 4 : 2) else { return 0 }
        let high = Int(bytes[start]) << 8 | Int(bytes[start + 1])
        return wide ? high << 16 | Int(bytes[start + 2]) << 8 | Int(bytes[start + 3]) : high
    }

    private static let meta = fourCC("meta"), iprp = fourCC("iprp"), ipma = fourCC("ipma"), iinf = fourCC("iinf"), iloc = fourCC("iloc")

    private static func fourCC(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    /// Calls `body` with each box's type and contents in `range`, stopping at a box that does not
    /// fit, or at a cancel (looked at every 4,096 boxes: a file can hold millions of empty ones).
    private static func forEachBox(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>, _ body: (UInt32, Range<Int>) -> Void) {
        var offset = range.lowerBound
        var boxes = 0
        while range.upperBound - offset >= 8 {
            boxes += 1
            if boxes & 0xFFF == 0, Task.isCancelled { return }
            var size = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            var header = 8
            if size == 1 {
                guard range.upperBound - offset >= 16 else { return }
                size = (offset + 8..<offset + 16).reduce(0) { $0 << 8 | Int(bytes[$1]) }
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, size <= range.upperBound - offset else { return }
            let type = (offset + 4..<offset + 8).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[$1]) }
            body(type, (offset + header)..<(offset + size))
            offset += size
        }
    }
}
