extension GIFStream {
    /// The LZW minimum code size of the image descriptor that starts at `descriptor` (just after
    /// its `,`), when giflib refused it for being 9–11 and stopped right after reading it.
    func wideCodeSize(descriptorAt descriptor: Int) -> Int? {
        let bytes = input.pointee.bytes
        guard descriptor + 9 <= bytes.count else { return nil }
        let flags = bytes[descriptor + 8]
        let localTable = flags & 0x80 != 0 ? 3 << (Int(flags & 7) + 1) : 0
        let codeSize = descriptor + 9 + localTable
        guard codeSize < bytes.count, input.pointee.offset == codeSize + 1, (9...11).contains(bytes[codeSize]) else { return nil }
        return Int(bytes[codeSize])
    }

    /// ``readRows(of:_:)`` for a frame with wide codes: ``GIFLZWDecoder`` over the bytes giflib
    /// would read next; giflib reads on from the record after the frame.
    func readWideRows(of frame: Frame, _ body: (Int, UnsafeBufferPointer<UInt8>) -> Void) throws(ImageDecodingError) {
        guard let size = wideCodeSize else { return }
        wideCodeSize = nil
        var decoder = GIFLZWDecoder(minimumCodeSize: size)
        var row = [UInt8](repeating: 0, count: frame.width)
        let bytes = input.pointee.bytes
        for y in Self.rowOrder(height: frame.height, interlaced: frame.interlaced) {
            try decoder.fill(&row, from: bytes, offset: &input.pointee.offset)
            row.withUnsafeBufferPointer { body(y, $0) }
        }
        try decoder.finish(bytes, offset: &input.pointee.offset)
    }

    /// ``skipPixels()`` for a frame with wide codes: its sub-blocks skipped undecoded.
    func skipWidePixels() throws(ImageDecodingError) {
        wideCodeSize = nil
        try GIFLZWDecoder.skipBlocks(input.pointee.bytes, offset: &input.pointee.offset)
    }
}
