internal import CSpng

/// Decodes one APNG frame's region to straight RGBA8 with libspng, into a buffer the caller
/// owns: a PNG stream of the region's size with the file's IHDR fields, PLTE, tRNS and the
/// frame's data is written into a buffer kept from frame to frame, and libspng decodes it.
///
/// The chunks' CRCs were checked when the animation was parsed, so the stream is written without
/// them and libspng is told not to check. A class: the compositor calls it back while the
/// frame walker that holds both is being modified. Not `Sendable`, as the walker.
final class APNGRegionDecoder {
    let animation: APNGAnimation
    /// The stream of the last frame; its capacity is reused by the next.
    private var stream: [UInt8] = []
    /// The longest frame's stream: the capacity reserved at the first frame, so that no frame
    /// grows the buffer again (each growth a new allocation the kernel faults in).
    private let longestStream: Int

    init(_ animation: APNGAnimation) {
        self.animation = animation
        let longestData = animation.frames.lazy.map(\.dataLength).max() ?? 0
        longestStream = Self.streamLength(of: animation, dataLength: longestData)
    }

    /// Bytes in a frame's stream with `dataLength` bytes of image data.
    private static func streamLength(of animation: APNGAnimation, dataLength: Int) -> Int {
        let shared = animation.sharedChunks.reduce(0) { $0 + 12 + $1.data.count }
        return PNGChunks.signature.count + (12 + 13) + shared + (12 + dataLength) + 12
    }

    /// Writes `frame`'s pixels into `out`, which must hold exactly `4 · width · height` bytes; on
    /// success every byte is written. `bytes` is the file the frame's data ranges point into.
    func decode(
        _ frame: APNGAnimation.Frame, from bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) throws(ImageDecodingError) {
        let length = frame.dataLength
        guard length <= Int(UInt32.max) else { throw .corrupt(format: .apng, reason: "frame data over 4 GB") }
        writeStream(frame, length: length, from: bytes)
        // libspng reads from the stream during decode, so it stays pinned throughout.
        let result = stream.withUnsafeBytes { stream -> Result<Void, ImageDecodingError> in
            do throws(ImageDecodingError) {
                return .success(try PNGCoder.withDecoder(bytes: stream) { ctx throws(ImageDecodingError) in
                    spng_set_crc_action(ctx, Int32(SPNG_CRC_USE.rawValue), Int32(SPNG_CRC_USE.rawValue))
                    let format = Int32(SPNG_FMT_RGBA8.rawValue)
                    var count = 0
                    try PNGCoder.check(spng_decoded_image_size(ctx, format, &count))
                    guard count == frame.width * frame.height * 4, count == out.count else {
                        throw .corrupt(format: .apng, reason: "frame size mismatch")
                    }
                    // libspng writes every row of a successful decode.
                    try PNGCoder.check(spng_decode_image(ctx, out.baseAddress, out.count, format, Int32(SPNG_DECODE_TRNS.rawValue)))
                })
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// The frame's PNG stream in ``stream``: signature, IHDR with the region's size, the shared
    /// chunks, one IDAT with every piece of the frame's data copied straight in, IEND.
    private func writeStream(_ frame: APNGAnimation.Frame, length: Int, from bytes: UnsafeRawBufferPointer) {
        stream.removeAll(keepingCapacity: true)
        stream.reserveCapacity(max(longestStream, Self.streamLength(of: animation, dataLength: length)))
        stream += PNGChunks.signature
        var ihdr: [UInt8] = []
        PNGChunks.appendUInt32(UInt32(frame.width), to: &ihdr)
        PNGChunks.appendUInt32(UInt32(frame.height), to: &ihdr)
        ihdr += animation.ihdr[8...]
        PNGChunks.append(PNGChunks.type("IHDR"), ihdr, to: &stream, checksummed: false)
        for chunk in animation.sharedChunks { PNGChunks.append(chunk.type, chunk.data, to: &stream, checksummed: false) }
        PNGChunks.appendUInt32(UInt32(length), to: &stream)
        PNGChunks.appendUInt32(PNGChunks.type("IDAT"), to: &stream)
        for piece in animation.pieces[frame.pieces] { stream.append(contentsOf: bytes[piece]) }
        PNGChunks.appendUInt32(0, to: &stream)
        PNGChunks.append(PNGChunks.type("IEND"), [], to: &stream, checksummed: false)
    }
}
