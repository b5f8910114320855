internal import CGIF

/// giflib's low-level decoder over bytes in memory, walked one record at a time.
///
/// Unlike `DGifSlurp`, which allocates every frame's raster as declared, this reads a frame's
/// pixels one row at a time into a caller's row buffer, or skips them undecoded, so nothing is
/// allocated from sizes the file claims. All giflib state stays inside; every failure becomes
/// ``ImageDecodingError/corrupt(format:reason:)``.
///
/// - note: Not thread-safe and not `Sendable`; it keeps `bytes` alive while it reads them.
final class GIFStream {
    /// One image descriptor and the graphic control extension before it.
    struct Frame {
        var left, top, width, height: Int
        var interlaced: Bool
        /// 256 RGBA entries (missing ones opaque black); the transparent index has alpha 0. Empty
        /// when the frame was read for a walk (``nextFrame(withPalette:)``).
        var palette: [UInt8]
        /// The transparent index, when the frame has one (0…255).
        var transparentIndex: Int?
        /// Colours in the palette the frame uses (local, else global); 0 when it has none.
        var paletteCount: Int
        /// The transparent index lies beyond `paletteCount` (it is honoured all the same).
        var transparentBeyondPalette: Bool
        var disposal: Int
        var delayCentiseconds: Int
        /// The LZW minimum code size is 9–11, beyond GIF's 8: decoded by ``GIFLZWDecoder``.
        var hasWideCodes = false
    }

    let width: Int
    let height: Int
    /// The NETSCAPE2.0 loop count as stored (0 = forever); 1 when the file has none.
    private(set) var loopCount = 1

    private let gif: UnsafeMutablePointer<GifFileType>
    private let bytes: PinnedBytes
    let input: UnsafeMutablePointer<Input>
    /// The current frame's LZW minimum code size when it is one giflib refuses (9–11).
    var wideCodeSize: Int?
    private var control = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: -1)

    init(_ bytes: PinnedBytes) throws(ImageDecodingError) {
        guard !bytes.bytes.isEmpty else { throw .empty }
        self.bytes = bytes
        input = .allocate(capacity: 1)
        input.initialize(to: Input(bytes: bytes.bytes, offset: 0))
        var error: Int32 = 0
        guard let gif = DGifOpen(input, Self.read, &error) else {
            input.deallocate()
            throw Self.error(error)
        }
        self.gif = gif
        width = Int(gif.pointee.SWidth)
        height = Int(gif.pointee.SHeight)
        // A zero-size logical screen is the coder's to judge (browsers grow it to the frames).
    }

    /// Whether every byte has been read (a file that ends here lacks only its trailer).
    var atEnd: Bool { input.pointee.offset >= input.pointee.bytes.count }

    deinit {
        DGifCloseFile(gif, nil)
        input.deallocate()
    }

    /// The next frame's descriptor, extensions before it consumed; `nil` at the trailer.
    /// Follow it with ``readRows(of:_:)`` or ``skipPixels()``. A walk that only counts and
    /// measures frames leaves out the palette (`withPalette: false`): building it was most of
    /// the cost of walking a GIF of 600,000 one-pixel frames.
    func nextFrame(withPalette: Bool = true) throws(ImageDecodingError) -> Frame? {
        while true {
            var type = UNDEFINED_RECORD_TYPE
            try check(DGifGetRecordType(gif, &type))
            switch type {
            case IMAGE_DESC_RECORD_TYPE:
                let descriptor = input.pointee.offset
                let status = DGifGetImageDesc(gif)
                // giflib keeps a record of every frame read (with a copy of its local palette)
                // until the file closes: 110 MB for a 46 MB file of two million frames. Nothing
                // here reads them, so each goes at once.
                GifFreeSavedImages(gif)
                gif.pointee.ImageCount = 0
                if status != GIF_OK {
                    // giflib stops at a code size over 8 with the descriptor read: browsers go on.
                    guard let size = wideCodeSize(descriptorAt: descriptor) else { throw Self.error(gif.pointee.Error) }
                    wideCodeSize = size
                }
                var next = frame(withPalette: withPalette)
                next.hasWideCodes = wideCodeSize != nil
                return next
            case EXTENSION_RECORD_TYPE:
                try readExtension()
            case TERMINATE_RECORD_TYPE:
                return nil
            default:
                throw .corrupt(format: .gif, reason: "unknown record type")
            }
        }
    }

    /// Decodes the current frame's rows; `body` gets the row's index within the frame (interlacing
    /// undone) and its palette indices.
    func readRows(of frame: Frame, _ body: (Int, UnsafeBufferPointer<UInt8>) -> Void) throws(ImageDecodingError) {
        guard frame.width > 0, frame.height > 0 else { return try skipPixels() }
        if wideCodeSize != nil { return try readWideRows(of: frame, body) }
        var row = [UInt8](repeating: 0, count: frame.width)
        for y in Self.rowOrder(height: frame.height, interlaced: frame.interlaced) {
            let status = row.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frame.width)) }
            try check(status)
            row.withUnsafeBufferPointer { body(y, $0) }
        }
    }

    /// Skips the current frame's compressed data without decoding it.
    func skipPixels() throws(ImageDecodingError) {
        if wideCodeSize != nil { return try skipWidePixels() }
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetCode(gif, &codeSize, &block))
        while block != nil { try check(DGifGetCodeNext(gif, &block)) }
    }

    /// Rows in the order they are stored: top to bottom, or the four interlace passes.
    static func rowOrder(height: Int, interlaced: Bool) -> [Int] {
        guard interlaced else { return Array(0..<height) }
        return [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: height, by: step)) }
    }

    // MARK: - Internals

    struct Input {
        var bytes: UnsafeRawBufferPointer
        var offset: Int
    }

    /// giflib's read callback: copies up to `count` bytes from the ``Input`` in `UserData`.
    private static let read: InputFunc = { gif, buffer, count in
        guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
        let input = user.assumingMemoryBound(to: Input.self)
        let available = min(Int(count), input.pointee.bytes.count - input.pointee.offset)
        guard available > 0, let base = input.pointee.bytes.baseAddress else { return 0 }
        UnsafeMutableRawPointer(buffer).copyMemory(from: base + input.pointee.offset, byteCount: available)
        input.pointee.offset += available
        return Int32(available)
    }

    private func frame(withPalette: Bool) -> Frame {
        let desc = gif.pointee.Image
        let map = desc.ColorMap ?? gif.pointee.SColorMap
        let colors = map?.pointee.Colors
        let paletteCount = colors == nil ? 0 : min(max(Int(map?.pointee.ColorCount ?? 0), 0), 256)
        let transparent = Int(control.TransparentColor)
        let transparentIndex = (0..<256).contains(transparent) ? transparent : nil
        var palette: [UInt8] = []
        if withPalette {
            palette = [UInt8](repeating: 0, count: 256 * 4)
            for i in 0..<256 { palette[i * 4 + 3] = 255 }
            if let colors {
                for i in 0..<paletteCount {
                    palette[i * 4] = colors[i].Red
                    palette[i * 4 + 1] = colors[i].Green
                    palette[i * 4 + 2] = colors[i].Blue
                }
            }
            if let transparentIndex {
                for c in 0..<4 { palette[transparentIndex * 4 + c] = 0 }
            }
        }
        let result = Frame(
            left: Int(desc.Left), top: Int(desc.Top), width: Int(desc.Width), height: Int(desc.Height),
            interlaced: desc.Interlace, palette: palette, transparentIndex: transparentIndex, paletteCount: paletteCount,
            transparentBeyondPalette: transparent >= paletteCount, disposal: Int(control.DisposalMode),
            delayCentiseconds: Int(control.DelayTime))
        // A graphic control extension applies to the next image only.
        control = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: -1)
        return result
    }

    private func readExtension() throws(ImageDecodingError) {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetExtension(gif, &code, &block))
        var first = true, isNetscape = false
        while let current = block {
            let length = Int(current[0])
            if code == GRAPHICS_EXT_FUNC_CODE, first, length >= 4 {
                _ = DGifExtensionToGCB(length, current + 1, &control)
            } else if code == APPLICATION_EXT_FUNC_CODE, first, length == 11 {
                let name = String(decoding: UnsafeBufferPointer(start: current + 1, count: 11), as: UTF8.self)
                isNetscape = name == "NETSCAPE2.0" || name == "ANIMEXTS1.0"
            } else if isNetscape, length >= 3, current[1] == 1 {
                loopCount = Int(current[2]) | Int(current[3]) << 8
            }
            first = false
            try check(DGifGetExtensionNext(gif, &block))
        }
    }

    private func check(_ status: Int32) throws(ImageDecodingError) {
        guard status == GIF_OK else { throw Self.error(gif.pointee.Error) }
    }

    private static func error(_ code: Int32) -> ImageDecodingError {
        let reason = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        return .corrupt(format: .gif, reason: reason)
    }
}
