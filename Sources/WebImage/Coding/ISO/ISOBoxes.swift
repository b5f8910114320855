/// Walks the boxes of a HEIF-family file (HEIC, HEIF, AVIF) without trusting a single size:
/// every box must fit inside its parent, and a walk looks at the cancel every 4,096 boxes (a
/// file can hold millions of empty ones). Used by the checks made before libheif or libavif see
/// a file (``ISOItemLimit``, ``ISOMeta``).
///
/// ```swift
/// ISOBoxes.forEachMetaChild(bytes) { type, body in if type == ISOBoxes.fourCC("iinf") { … } }
/// ```
enum ISOBoxes {
    /// Calls `body` with each box's type and contents in `range`, stopping at a box that does not
    /// fit, or at a cancel.
    static func forEachBox(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>, _ body: (UInt32, Range<Int>) -> Void) {
        var offset = range.lowerBound
        var boxes = 0
        while range.upperBound - offset >= 8 {
            boxes += 1
            if boxes & 0xFFF == 0, Task.isCancelled { return }
            var size = Int(bigEndian: bytes, at: offset, count: 4)
            var header = 8
            if size == 1 {
                guard range.upperBound - offset >= 16 else { return }
                size = Int(bigEndian: bytes, at: offset + 8, count: 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, size <= range.upperBound - offset else { return }
            body(UInt32(truncatingIfNeeded: Int(bigEndian: bytes, at: offset + 4, count: 4)), (offset + header)..<(offset + size))
            offset += size
        }
    }

    /// Calls `body` with each box inside the top-level `meta` boxes (after their version and flags).
    static func forEachMetaChild(_ bytes: UnsafeRawBufferPointer, _ body: (UInt32, Range<Int>) -> Void) {
        forEachBox(bytes, in: 0..<bytes.count) { type, contents in
            guard type == meta, contents.count >= 4 else { return }
            forEachBox(bytes, in: (contents.lowerBound + 4)..<contents.upperBound, body)
        }
    }

    /// A box type as the 32-bit number the walks report.
    static func fourCC(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    static let meta = fourCC("meta")
}

extension Int {
    /// `count` bytes (at most 8) at `offset` as a big-endian number; the caller has checked they
    /// are inside `bytes`. Eight bytes with the top bit set give a negative number, which every
    /// size check refuses.
    init(bigEndian bytes: UnsafeRawBufferPointer, at offset: Int, count: Int) {
        self = (offset..<(offset + count)).reduce(0) { $0 << 8 | Int(bytes[$1]) }
    }
}
