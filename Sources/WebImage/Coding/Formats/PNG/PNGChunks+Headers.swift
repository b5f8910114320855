extension PNGChunks {
    /// Walks the chunks of the PNG stream in `bytes` (after its signature) by their headers,
    /// without checking CRCs: `body` is given each chunk's type, where the chunk starts and where
    /// its data lies, and returns `false` to stop. The walk stops after `IEND`, before a chunk
    /// that does not fit, and at a cancel, looked at every 4,096 chunks. Every metadata read
    /// (orientation, colour, loop count, CRC scan) walks this way: a hostile file holds millions
    /// of empty chunks, and each read once had a loop of its own without a look at the cancel.
    ///
    /// Returns `false` when the walk stopped at a cancel.
    ///
    /// ```swift
    /// PNGChunks.walkHeaders(bytes) { type, _, data in type != PNGChunks.Types.idat }
    /// ```
    @discardableResult
    static func walkHeaders(_ bytes: UnsafeRawBufferPointer, _ body: (_ type: UInt32, _ start: Int, _ data: Range<Int>) -> Bool) -> Bool {
        var offset = 8, chunks = 0
        while offset + 12 <= bytes.count {
            chunks += 1
            if chunks & 0xFFF == 0, Task.isCancelled { return false }
            let length = Int(readUInt32(bytes, offset))
            guard length <= bytes.count - offset - 12 else { return true }
            let type = readUInt32(bytes, offset + 4)
            guard body(type, offset, (offset + 8)..<(offset + 8 + length)), type != Types.iend else { return true }
            offset += 12 + length
        }
        return true
    }
}
