/// Reads the fields of a coded picture's headers (an HEVC parameter set, an AV1 sequence
/// header), most significant bit first, from a few bytes copied out of the file. Each read
/// gives `nil` past the end, and the variable-length codes refuse more than 31 leading zeros,
/// so no field of a stranger's file can trap or loop.
///
/// ```swift
/// var reader = BitReader([0b1010_0000])
/// reader.bits(3)  // 5
/// ```
struct BitReader {
    private let bytes: [UInt8]
    private var bit = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next `count` bits (0 to 32) as a number.
    mutating func bits(_ count: Int) -> Int? {
        guard count >= 0, count <= 32, bytes.count * 8 - bit >= count else { return nil }
        var value = 0
        for _ in 0..<count {
            value = value << 1 | Int(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
            bit += 1
        }
        return value
    }

    mutating func flag() -> Bool? { bits(1).map { $0 == 1 } }

    /// Skips `count` bits; `false` past the end.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, bytes.count * 8 - bit >= count else { return false }
        bit += count
        return true
    }

    /// The count of zero bits before the next one bit (at most 31), and that one bit read.
    private mutating func leadingZeros() -> Int? {
        var zeros = 0
        while true {
            guard let next = bits(1) else { return nil }
            if next == 1 { return zeros }
            zeros += 1
            guard zeros <= 31 else { return nil }
        }
    }

    /// An unsigned Exp-Golomb code, `ue(v)` of H.265.
    mutating func expGolomb() -> Int? {
        guard let zeros = leadingZeros(), let value = bits(zeros) else { return nil }
        return (1 << zeros) - 1 + value
    }

    /// AV1's `uvlc()` (the same code; AV1 allows 32 leading zeros, read here as too many).
    mutating func uvlc() -> Int? { expGolomb() }
}
