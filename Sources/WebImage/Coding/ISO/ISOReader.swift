/// Big-endian reads inside one range of a file's bytes that never run past it: each read gives
/// `nil` (and reads nothing) when the bytes are not there. The box parsers of HEIF-family files
/// read every count, offset and size through it.
///
/// ```swift
/// var reader = ISOReader(bytes, body)
/// guard let version = reader.u8(), reader.skip(3), let count = reader.uint(4) else { return }
/// ```
struct ISOReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var position: Int
    let end: Int

    init(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        self.bytes = bytes
        position = range.lowerBound
        end = min(range.upperBound, bytes.count)
    }

    /// What is left to read.
    var rest: Range<Int> { min(position, end)..<end }

    mutating func u8() -> Int? { uint(1) }

    /// The next `size` bytes (0 to 8) as an unsigned number; 0 for a size of 0, as ISO fields of
    /// size 0 mean. Eight bytes with the top bit set give `nil` (no offset or length is that large).
    mutating func uint(_ size: Int) -> Int? {
        guard size >= 0, size <= 8, end - position >= size else { return nil }
        let value = UInt64((position..<(position + size)).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[$1]) })
        position += size
        return value > UInt64(Int.max) ? nil : Int(value)
    }

    /// Skips `count` bytes; `false` (and skips nothing) when they are not there.
    @discardableResult
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, end - position >= count else { return false }
        position += count
        return true
    }
}
