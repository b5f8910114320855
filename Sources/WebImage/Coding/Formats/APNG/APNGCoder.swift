internal import CSpng
public import Foundation

/// Animated PNG decoding and encoding; frames decode through libspng.
///
/// Decoding reads the animation chunks (``APNGAnimation``), refuses canvas × frames over
/// ``ImageDecodingOptions/maxPixelCount`` before any pixel buffer exists, then decodes each
/// frame's region with libspng (every colour type and bit depth, palette with `tRNS`, 16-bit
/// reduced to 8) and composites it with its blend and dispose operations. `num_plays` is the
/// loop count (0 = forever); a delay with denominator 0 counts in 1/100 s, and then
/// ``ImageFrame/clampedDuration(milliseconds:)`` applies as for GIF and WebP. When the default
/// image (IDAT) is not part of the animation it is skipped, as browsers do. An APNG whose
/// animation chunks are broken (bad CRC, sequence, region, missing frames, undecodable frame
/// data) decodes as the still PNG it contains, with format ``ImageFormat/png``.
///
/// Encoding writes every frame full-canvas (blend *source*, dispose *none*), each with its
/// duration in milliseconds, and the loop count; decoding the result gives back the same pixels,
/// durations and loop count.
///
/// ```swift
/// let animation = try APNGCoder().decode(data, options: .default)
/// print(animation.frameCount, animation.loopCount, animation.frames.map(\.duration))
/// let apng = try APNGCoder().encode(animation, as: .apng, quality: 1)
/// ```
public struct APNGCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .apng }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .apng }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        guard let animation = Self.animation(data) else { return try PNGCoder().readHeader(data) }
        let still = try PNGCoder().readHeader(data)
        return ImageHeader(
            format: .apng, pixelWidth: animation.width, pixelHeight: animation.height, frameCount: animation.frames.count,
            hasAlpha: still.hasAlpha || animation.frames.contains { $0.width < animation.width || $0.height < animation.height })
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard var frames = APNGFrames(PinnedBytes(copying: data), options: options) else {
            return try PNGCoder().decode(data, options: options)
        }
        try options.checkPixelLimit(frames.header)
        let animation = frames.animation
        // A frame that does not decode makes the file show as its still image, as browsers do.
        guard let decoded = try? frames.frames(limit: options.firstFrameOnly ? 1 : animation.frames.count) else {
            return try PNGCoder().decode(data, options: options)
        }
        return Image.decoded(
            format: .apng, pixelWidth: frames.sizing.targetWidth, pixelHeight: frames.sizing.targetHeight, frames: decoded,
            frameCount: animation.frames.count, loopCount: animation.loopCount, scale: options.scale)
    }

    /// An ``APNGAnimationDecoder`` over `data`; `nil` when its animation chunks are broken (the
    /// file decodes as a still PNG).
    public func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        try APNGAnimationDecoder(data, options: options)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        try image.checkEncodable(as: format)
        return try APNGWriter.encode(image)
    }

    // MARK: - Internals

    /// The animation, or `nil` when the chunks do not describe a valid one (then the still image shows).
    static func animation(_ data: Data) -> APNGAnimation? {
        data.withUnsafeBytes { try? APNGAnimation($0) }
    }

    /// One frame's region as straight RGBA8: a PNG stream of the region's size with the file's
    /// IHDR fields, PLTE, tRNS and the frame's data, decoded by libspng. The chunks' CRCs were
    /// checked when the animation was parsed, so the stream is written without them and libspng
    /// is told not to check.
    static func decodeRegion(
        _ frame: APNGAnimation.Frame, of animation: APNGAnimation, in bytes: UnsafeRawBufferPointer
    ) throws(ImageDecodingError) -> [UInt8] {
        var stream = PNGChunks.signature
        var ihdr: [UInt8] = []
        PNGChunks.appendUInt32(UInt32(frame.width), to: &ihdr)
        PNGChunks.appendUInt32(UInt32(frame.height), to: &ihdr)
        ihdr += animation.ihdr[8...]
        PNGChunks.append(PNGChunks.type("IHDR"), ihdr, to: &stream, checksummed: false)
        for chunk in animation.sharedChunks { PNGChunks.append(chunk.type, chunk.data, to: &stream, checksummed: false) }
        // One IDAT with every piece of the frame's data, copied straight into the stream.
        let length = frame.data.reduce(0) { $0 + $1.count }
        guard length <= Int(UInt32.max) else { throw .corrupt(format: .apng, reason: "frame data over 4 GB") }
        stream.reserveCapacity(stream.count + length + 24)
        PNGChunks.appendUInt32(UInt32(length), to: &stream)
        PNGChunks.appendUInt32(PNGChunks.type("IDAT"), to: &stream)
        for piece in frame.data { stream.append(contentsOf: bytes[piece]) }
        PNGChunks.appendUInt32(0, to: &stream)
        PNGChunks.append(PNGChunks.type("IEND"), [], to: &stream, checksummed: false)
        return try PNGCoder.withDecoder(Data(stream)) { ctx throws(ImageDecodingError) -> [UInt8] in
            spng_set_crc_action(ctx, Int32(SPNG_CRC_USE.rawValue), Int32(SPNG_CRC_USE.rawValue))
            let format = Int32(SPNG_FMT_RGBA8.rawValue)
            var count = 0
            try PNGCoder.check(spng_decoded_image_size(ctx, format, &count))
            guard count == frame.width * frame.height * 4 else { throw .corrupt(format: .apng, reason: "frame size mismatch") }
            // libspng writes every row of a successful decode; a failure throws the buffer away.
            var pixels = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
            let status = pixels.withUnsafeMutableBytes { out in
                spng_decode_image(ctx, out.baseAddress, out.count, format, Int32(SPNG_DECODE_TRNS.rawValue))
            }
            try PNGCoder.check(status)
            return pixels
        }
    }
}
