import Foundation

/// A private copy of encoded data at a fixed address, for C decoders that keep a pointer into
/// their input between calls (libwebp's demuxer, libavif's memory IO, giflib's read callback).
///
/// A `Data`'s storage may only be borrowed inside `withUnsafeBytes`; a decoder that outlives one
/// call needs bytes that stay put until it is freed. Hold this object at least as long as the
/// decoder that reads it.
///
/// A decoder freed before one call returns (a header read, a whole decode) borrows the `Data`'s
/// own bytes instead (``borrowing(_:_:)``): a copy of a 50 MB source was 50 MB more at the peak
/// of every header read and decode of a GIF, an animated WebP or an AVIF (stop 52).
final class PinnedBytes {
    let bytes: UnsafeRawBufferPointer
    /// Whether `bytes` is this object's own allocation (freed with it), not borrowed.
    private let owns: Bool

    init(copying data: Data) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        data.copyBytes(to: buffer.bindMemory(to: UInt8.self), count: data.count)
        bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<data.count])
        owns = true
    }

    private init(borrowed: UnsafeRawBufferPointer) {
        bytes = borrowed
        owns = false
    }

    deinit {
        // `bytes` starts at the allocation's base address.
        if owns { UnsafeMutableRawPointer(mutating: bytes.baseAddress)?.deallocate() }
    }

    /// `body` given `data`'s own bytes, pinned while it runs (an empty `data` is copied, so the
    /// address is never nil). `body` must not keep the object, nor anything that holds it, past
    /// its return: checked in debug builds.
    ///
    /// ```swift
    /// let header = try PinnedBytes.borrowing(data) { try GIFScan($0, recording: 0).header }
    /// ```
    static func borrowing<T>(_ data: Data, _ body: (PinnedBytes) throws(ImageDecodingError) -> T) throws(ImageDecodingError) -> T {
        if data.isEmpty { return try body(PinnedBytes(copying: data)) }
        let result = data.withUnsafeBytes { raw -> Result<T, ImageDecodingError> in
            var pinned = PinnedBytes(borrowed: raw)
            defer { assert(isKnownUniquelyReferenced(&pinned), "borrowed bytes kept past their call") }
            do throws(ImageDecodingError) {
                return .success(try body(pinned))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The first byte's address as libwebp and libavif take it.
    var uint8Pointer: UnsafePointer<UInt8>? { bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) }
}
