import Foundation

/// A private copy of encoded data at a fixed address, for C decoders that keep a pointer into
/// their input between calls (libwebp's demuxer, libavif's memory IO, giflib's read callback).
///
/// A `Data`'s storage may only be borrowed inside `withUnsafeBytes`; a decoder that outlives one
/// call needs bytes that stay put until it is freed. Hold this object at least as long as the
/// decoder that reads it.
final class PinnedBytes {
    let bytes: UnsafeRawBufferPointer

    init(copying data: Data) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        data.copyBytes(to: buffer.bindMemory(to: UInt8.self), count: data.count)
        bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<data.count])
    }

    deinit {
        // `bytes` starts at the allocation's base address.
        UnsafeMutableRawPointer(mutating: bytes.baseAddress)?.deallocate()
    }

    /// The first byte's address as libwebp and libavif take it.
    var uint8Pointer: UnsafePointer<UInt8>? { bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) }
}
