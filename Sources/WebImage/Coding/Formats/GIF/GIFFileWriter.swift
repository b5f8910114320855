internal import CGIF
import Foundation

/// One GIF file being written through giflib's encoder: the screen and loop count when made,
/// then frames one at a time, then the trailer. The half of ``GIFWriter`` that owns giflib's
/// handle; ``GIFAnimationEncoder`` writes through it frame by frame.
///
/// Not `Sendable`: it lives inside one encode.
final class GIFFileWriter {
    private let sink = Sink()
    private var gif: UnsafeMutablePointer<GifFileType>?

    init(width: Int, height: Int, globalPalette: [UInt8]?, loopCount: Int?) throws(ImageEncodingError) {
        guard (1...65_535).contains(width), (1...65_535).contains(height) else {
            throw .encodingFailed(format: .gif, reason: "GIF sides must be 1…65535 pixels")
        }
        var error: Int32 = 0
        guard let gif = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), Self.write, &error) else {
            throw Self.failure(error)
        }
        self.gif = gif
        EGifSetGifVersion(gif, true)
        try withColorMap(globalPalette) { map throws(ImageEncodingError) in
            try check(gif, EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, map))
        }
        if let loopCount { try putLoopCount(gif, loopCount) }
    }

    deinit {
        if let gif { EGifCloseFile(gif, nil) }
    }

    /// Writes one frame.
    func put(_ frame: GIFWriter.Frame) throws(ImageEncodingError) {
        guard let gif else { throw .encodingFailed(format: .gif, reason: "the file is finished") }
        try put(gif, frame)
    }

    /// Writes the trailer and gives the file.
    func finish() throws(ImageEncodingError) -> Data {
        guard let gif else { throw .encodingFailed(format: .gif, reason: "the file is finished") }
        self.gif = nil
        var error: Int32 = 0
        guard EGifCloseFile(gif, &error) == GIF_OK else { throw Self.failure(error) }
        return Data(sink.bytes)
    }

    // MARK: - Internals

    /// The bytes giflib writes; reached from C through `UserData`.
    private final class Sink {
        var bytes: [UInt8] = []
    }

    private static let write: OutputFunc = { gif, bytes, count in
        guard let gif, let bytes, let user = gif.pointee.UserData else { return 0 }
        let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
        sink.bytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
        return count
    }

    private func put(_ gif: UnsafeMutablePointer<GifFileType>, _ frame: GIFWriter.Frame) throws(ImageEncodingError) {
        // Every field is 16 bits in the file (the index 8): checked before the `Int32`
        // conversions and the product below, which would trap on a caller's huge values.
        guard (0...65_535).contains(frame.left), (0...65_535).contains(frame.top),
              (1...65_535).contains(frame.width), (1...65_535).contains(frame.height) else {
            throw .encodingFailed(format: .gif, reason: "a frame's position and size must be 0…65535 and 1…65535")
        }
        guard frame.indices.count == frame.width * frame.height else {
            throw .encodingFailed(format: .gif, reason: "frame indices do not match its size")
        }
        if let index = frame.transparentIndex, !(0...255).contains(index) {
            throw .encodingFailed(format: .gif, reason: "transparent index \(index) is not 0…255")
        }
        // A delay outside 0…65535 centiseconds is clamped to it.
        var control = GraphicsControlBlock(
            DisposalMode: frame.disposal.rawValue, UserInputFlag: false, DelayTime: Int32(min(max(frame.delayCentiseconds, 0), 65_535)),
            TransparentColor: Int32(frame.transparentIndex ?? Int(NO_TRANSPARENT_COLOR)))
        var extensionBytes = [GifByteType](repeating: 0, count: 4)
        let length = EGifGCBToExtension(&control, &extensionBytes)
        try check(gif, EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes))
        try withColorMap(frame.palette) { map throws(ImageEncodingError) in
            try check(gif, EGifPutImageDesc(
                gif, Int32(frame.left), Int32(frame.top), Int32(frame.width), Int32(frame.height), frame.interlaced, map))
        }
        var row = [GifPixelType](repeating: 0, count: frame.width)
        for (n, y) in GIFStream.rowOrder(height: frame.height, interlaced: frame.interlaced).enumerated() {
            // giflib's LZW runs a row at a time: a cancelled render stops between rows.
            if n % 16 == 0, Task.isCancelled { throw .cancelled }
            for x in 0..<frame.width { row[x] = frame.indices[y * frame.width + x] }
            try check(gif, EGifPutLine(gif, &row, Int32(frame.width)))
        }
    }

    private func putLoopCount(_ gif: UnsafeMutablePointer<GifFileType>, _ count: Int) throws(ImageEncodingError) {
        try check(gif, EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE))
        try check(gif, EGifPutExtensionBlock(gif, 11, Array("NETSCAPE2.0".utf8)))
        let value = min(max(count, 0), 65_535)
        try check(gif, EGifPutExtensionBlock(gif, 3, [1, UInt8(value & 0xFF), UInt8(value >> 8)] as [UInt8]))
        try check(gif, EGifPutExtensionTrailer(gif))
    }

    /// A giflib colour map for RGB triples, padded to a power of two, alive during `body`.
    private func withColorMap(
        _ palette: [UInt8]?, _ body: (UnsafeMutablePointer<ColorMapObject>?) throws(ImageEncodingError) -> Void
    ) throws(ImageEncodingError) {
        guard let palette else { return try body(nil) }
        let count = palette.count / 3
        guard count >= 1, count <= 256, palette.count % 3 == 0 else {
            throw .encodingFailed(format: .gif, reason: "a palette holds 1…256 RGB colours")
        }
        var size = 2
        while size < count { size *= 2 }
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: size)
        for i in 0..<count { colors[i] = GifColorType(Red: palette[i * 3], Green: palette[i * 3 + 1], Blue: palette[i * 3 + 2]) }
        guard let map = GifMakeMapObject(Int32(size), colors) else {
            throw .encodingFailed(format: .gif, reason: "cannot make a colour map")
        }
        defer { GifFreeMapObject(map) }
        try body(map)
    }

    private func check(_ gif: UnsafeMutablePointer<GifFileType>, _ status: Int32) throws(ImageEncodingError) {
        guard status == GIF_OK else { throw Self.failure(gif.pointee.Error) }
    }

    private static func failure(_ code: Int32) -> ImageEncodingError {
        .encodingFailed(format: .gif, reason: GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)")
    }
}
