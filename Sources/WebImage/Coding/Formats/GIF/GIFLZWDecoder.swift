/// GIF's LZW decompression in Swift, for the frames giflib refuses: an LZW minimum code size of
/// 9–11. GIF allows 2–8; Chrome, Firefox and Pillow accept up to 11, whose codes (clear code
/// 2048 at most) still fit LZW's 12-bit dictionary, and such files exist (Pillow's
/// `issue_2811.gif`). Everything else stays with giflib.
///
/// Reads the frame's data sub-blocks straight from the file's bytes, every read bounds-checked;
/// the dictionary is 4,096 entries whatever the file says (full: codes are no longer added, as
/// giflib and browsers do). Indices above 255 keep their low byte, as Pillow's and Chromium's
/// byte-wide dictionaries do. A bad code, data ending early, or an end code before the last
/// pixel throws ``ImageDecodingError/corrupt(format:reason:)``.
struct GIFLZWDecoder {
    private let clear: Int
    private var codeSize = 0
    private var next = 0
    private var previous: Int?
    private var prefix = [UInt16](repeating: 0, count: 4096)
    private var suffix = [UInt8](repeating: 0, count: 4096)
    private var first = [UInt8](repeating: 0, count: 4096)
    /// The current string's bytes not yet written, last byte first.
    private var pending: [UInt8] = []
    private var bits: UInt32 = 0
    private var bitCount = 0
    /// Bytes left in the current sub-block.
    private var blockLeft = 0
    /// The block terminator (a zero-length sub-block) has been read.
    private var terminated = false

    init(minimumCodeSize: Int) {
        clear = 1 << minimumCodeSize
        for code in 0..<clear { suffix[code] = UInt8(truncatingIfNeeded: code); first[code] = suffix[code] }
        reset()
    }

    /// Fills `row` with the frame's next pixels, reading sub-blocks at `offset` (moved past them).
    mutating func fill(_ row: inout [UInt8], from bytes: UnsafeRawBufferPointer, offset: inout Int) throws(ImageDecodingError) {
        var i = 0
        while i < row.count {
            if let byte = pending.popLast() {
                row[i] = byte
                i += 1
                continue
            }
            let code = try readCode(bytes, &offset)
            if code == clear {
                reset()
                continue
            }
            guard code != clear + 1 else { throw Self.failure("LZW data ended before the last pixel") }
            guard let previous else {
                guard code < clear else { throw Self.failure("bad LZW code \(code)") }
                pending.append(suffix[code])
                self.previous = code
                continue
            }
            let start: UInt8
            if code < next {
                push(code)
                start = first[code]
            } else if code == next {  // the string being defined: the previous one plus its first byte
                pending.append(first[previous])
                push(previous)
                start = first[previous]
            } else {
                throw Self.failure("bad LZW code \(code)")
            }
            if next < 4096 {
                (prefix[next], suffix[next], first[next]) = (UInt16(previous), start, first[previous])
                next += 1
                if next == 1 << codeSize, codeSize < 12 { codeSize += 1 }
            }
            self.previous = code
        }
    }

    /// Moves `offset` past the rest of the frame's sub-blocks, through the block terminator.
    mutating func finish(_ bytes: UnsafeRawBufferPointer, offset: inout Int) throws(ImageDecodingError) {
        guard !terminated else { return }
        guard offset + blockLeft <= bytes.count else { throw Self.failure("the data ends inside a frame") }
        offset += blockLeft
        try Self.skipBlocks(bytes, offset: &offset)
    }

    /// Moves `offset` past a run of sub-blocks and its terminator.
    static func skipBlocks(_ bytes: UnsafeRawBufferPointer, offset: inout Int) throws(ImageDecodingError) {
        while true {
            guard offset < bytes.count else { throw failure("the data ends inside a frame") }
            let length = Int(bytes[offset])
            guard offset + 1 + length <= bytes.count else { throw failure("the data ends inside a frame") }
            offset += 1 + length
            if length == 0 { return }
        }
    }

    // MARK: - Internals

    private mutating func reset() {
        codeSize = min(Int(clear.trailingZeroBitCount) + 1, 12)
        next = clear + 2
        previous = nil
    }

    /// Pushes the string of `code` onto `pending` (its last byte first). Each prefix is a smaller
    /// code than the one it was added for, so the walk ends.
    private mutating func push(_ code: Int) {
        var code = code
        while code > clear + 1 {
            pending.append(suffix[code])
            code = Int(prefix[code])
        }
        pending.append(suffix[code])
    }

    private mutating func readCode(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(ImageDecodingError) -> Int {
        while bitCount < codeSize {
            if blockLeft == 0 {
                guard !terminated, offset < bytes.count else { throw Self.failure("the data ends inside a frame") }
                blockLeft = Int(bytes[offset])
                offset += 1
                guard blockLeft > 0 else {
                    terminated = true
                    throw Self.failure("LZW data ended before the last pixel")
                }
            }
            guard offset < bytes.count else { throw Self.failure("the data ends inside a frame") }
            bits |= UInt32(bytes[offset]) << UInt32(bitCount)
            offset += 1
            blockLeft -= 1
            bitCount += 8
        }
        let code = Int(bits & ((1 << UInt32(codeSize)) - 1))
        bits >>= UInt32(codeSize)
        bitCount -= codeSize
        return code
    }

    private static func failure(_ reason: String) -> ImageDecodingError { .corrupt(format: .gif, reason: reason) }
}
