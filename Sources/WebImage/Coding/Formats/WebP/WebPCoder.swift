internal import CWebP
public import Foundation

/// WebP decoding and encoding over libwebp: lossy, lossless, alpha and animation.
///
/// Still images decode through libwebp's incremental decoder into a buffer we own, given the
/// file a piece at a time (1/128 of its coded data, 256 bytes to 64 KB: `pieces(for:)`)
/// with a look at `Task.isCancelled` between pieces; with
/// ``ImageDecodingOptions/thumbnailMaxPixelSize`` libwebp scales while decoding
/// (`use_scaling`), so the full-size buffer is never allocated. Animations decode frame by frame
/// the same way (libwebp's demuxer finds the frames, `WebPFrameCompositor` composites them as
/// libwebp's `WebPAnimDecoder` does); durations are clamped with
/// ``ImageFrame/clampedDuration(milliseconds:)``. Encoding is lossy at `quality < 1` and
/// lossless at `quality >= 1`; images with ``Image/frames`` become animated WebP.
///
/// ```swift
/// let image = try WebPCoder().decode(data, options: .init(thumbnailMaxPixelSize: 256))
/// let lossless = try WebPCoder().encode(image, as: .webp, quality: 1)
/// ```
public struct WebPCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .webp }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .webp }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.inspect(data).header
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let (header, animated) = try Self.inspect(data)
        try options.checkPixelLimit(header)
        if animated {
            var animation = try WebPAnimation.decode(data, header: header, options: options)
            animation.orientation = EXIFOrientation.read(fromWebP: data)
            return animation
        }
        var size = (width: header.pixelWidth, height: header.pixelHeight)
        if let side = options.thumbnailMaxPixelSize {
            size = Resampler.fittingSize(width: size.width, height: size.height, maxWidth: side, maxHeight: side)
        }
        var pixels = try Self.decodeStill(data, width: size.width, height: size.height, scaled: size.width != header.pixelWidth)
        let isOpaque = try header.hasAlpha ? PixelOperations.premultiplyStoppable(&pixels) : true
        return Image(
            format: .webp, pixelWidth: size.width, pixelHeight: size.height, pixels: pixels, isOpaque: isOpaque,
            scale: options.scale, orientation: EXIFOrientation.read(fromWebP: data))
    }

    /// A ``WebPAnimationDecoder`` over `data` (a still WebP gives one frame).
    public func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        try WebPAnimationDecoder(data, options: options)
    }

    /// A ``WebPAnimationEncoder``: frames are compressed as they are added.
    public func animatedEncoder(
        as format: ImageFormat, _ parameters: AnimationEncodingParameters
    ) throws(ImageEncodingError) -> (any AnimatedImageEncoding)? {
        try WebPAnimationEncoder(parameters)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        let (w, h) = try Self.encodableSize(image)
        if image.frames.count > 1 { return try WebPAnimation.encode(image, quality: quality) }
        let unitQuality = try EncodingQuality.unit(quality, format: .webp)
        guard !Task.isCancelled else { throw .cancelled }
        return try WebPStillEncoding.encode(PixelOperations.unpremultipliedStoppable(image), width: w, height: h, quality: unitQuality)
    }

    // MARK: - Internals

    /// WebP's largest side (`WEBP_MAX_DIMENSION`).
    static let maxSide = 16_383

    /// The image's sides as libwebp takes them, after ``Image/checkEncodable(as:maxSide:stridesAsInt32:)``:
    /// sides over ``maxSide`` are refused before any `Int32` conversion or stride product could overflow.
    static func encodableSize(_ image: Image) throws(ImageEncodingError) -> (width: Int32, height: Int32) {
        try image.checkEncodable(as: .webp, maxSide: maxSide)
        return (Int32(image.pixelWidth), Int32(image.pixelHeight))  // 1…16383
    }

    /// The header, and whether the file is an animation (even of one frame).
    static func inspect(_ data: Data) throws(ImageDecodingError) -> (header: ImageHeader, animated: Bool) {
        guard !data.isEmpty else { throw .empty }
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { src in
            WebPGetFeatures(src.baseAddress?.assumingMemoryBound(to: UInt8.self), src.count, &features)
        }
        let container = WebPContainer(data)
        if container.isCancelled { throw .cancelled }
        if status == VP8_STATUS_BITSTREAM_ERROR, let canvas = container.canvas, canvas.width * canvas.height >= 1 << 32 {
            // Too large for libwebp to parse: report the declared size so the limit refuses it.
            let header = ImageHeader(
                format: .webp, pixelWidth: canvas.width, pixelHeight: canvas.height, frameCount: max(container.frameCount, 1),
                hasAlpha: true)
            return (header, container.isAnimated)
        }
        try Self.check(status)
        guard features.width > 0, features.height > 0 else { throw .corrupt(format: .webp, reason: "zero size") }
        let frames = features.has_animation != 0 ? container.frameCount : 1
        guard frames > 0 else { throw .corrupt(format: .webp, reason: "animation without frames") }
        let header = ImageHeader(
            format: .webp, pixelWidth: Int(features.width), pixelHeight: Int(features.height), frameCount: frames,
            hasAlpha: features.has_alpha != 0)
        return (header, features.has_animation != 0)
    }

    /// Straight RGBA8 of a still image, scaled by libwebp when `scaled`.
    private static func decodeStill(_ data: Data, width: Int, height: Int, scaled: Bool) throws(ImageDecodingError) -> [UInt8] {
        // libwebp writes every pixel of a successful decode (a failure throws the buffer away), so
        // it need not be zeroed first.
        var pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { _, count in count = width * height * 4 }
        let status = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { dst -> VP8StatusCode? in
                guard var config = rgbaConfig(writingTo: dst, width: width) else { return VP8_STATUS_INVALID_PARAM }
                if scaled {
                    config.options.use_scaling = 1
                    config.options.scaled_width = Int32(width)
                    config.options.scaled_height = Int32(height)
                }
                defer { WebPFreeDecBuffer(&config.output) }
                let pieces = pieces(for: data)
                return decodeInPieces(src, pieceSize: pieces.size, firstPiece: pieces.first, &config)
            }
        }
        guard let status else { throw .cancelled }
        try check(status)
        return pixels
    }

    /// The bytes given to libwebp's incremental decoder at a time: 1/128 of the image's coded
    /// data (its `VP8 `, `VP8L` and `ALPH` chunks, so metadata or padding chunks do not make the
    /// pieces longer), at least 256 bytes and at most 64 KB (photos of 8 MB and more: as before).
    /// libwebp decodes the rows (lossy: the macroblock rows) whose bytes are in, so a solid-colour
    /// 49 MP WebP of 2–90 KB, which one or two pieces of 64 KB held, is decoded over many calls.
    /// A lossy file's first partition (modes) must be whole before any row is decoded, and its
    /// tokens can be 3 % of the file: 1/32 left the rows to one or two calls (82 ms), 1/128 to six.
    ///
    /// The first piece holds every chunk before the image's bitstream as well: libwebp parses the
    /// chunk headers from the start at each call until it reaches the bitstream, so a million
    /// empty chunks before a 1 × 1 image, given 256 bytes at a time, cost 37 s of CPU (an 8 MB
    /// file; red team, stop 51).
    static func pieces(for data: Data) -> (first: Int, size: Int) {
        let container = WebPContainer(data)
        let coded = container.imageDataBytes
        let size = pieceSize(codedBytes: coded > 0 ? coded : data.count)
        return (container.imageDataOffset + size, size)
    }

    /// The same for `codedBytes` of image data (an animation frame's bitstream).
    static func pieceSize(codedBytes: Int) -> Int { min(1 << 16, max(256, codedBytes / 128)) }

    /// libwebp's incremental decoder (the same pixels as `WebPDecode`) given the file
    /// `pieceSize` bytes more at a time, looking at `Task.isCancelled` before each piece: nil when
    /// cancelled. This bounds the work after a cancel whenever decoding waits on the bytes, solid
    /// colours included (coding.md, "Stopping a still's decode", has the measured bounds).
    static func decodeInPieces(
        _ src: UnsafeRawBufferPointer, pieceSize: Int, firstPiece: Int = 0, _ config: inout WebPDecoderConfig
    ) -> VP8StatusCode? {
        guard let base = src.baseAddress?.assumingMemoryBound(to: UInt8.self), !src.isEmpty else { return VP8_STATUS_NOT_ENOUGH_DATA }
        guard let decoder = WebPIDecode(nil, 0, &config) else { return VP8_STATUS_OUT_OF_MEMORY }
        defer { WebPIDelete(decoder) }
        var given = 0
        while true {
            if Task.isCancelled { return nil }
            given = min(src.count, max(firstPiece, given + max(1, pieceSize)))
            // The same buffer, longer each time: libwebp reads it in place (no copy).
            let status = WebPIUpdate(decoder, base, given)
            if status != VP8_STATUS_SUSPENDED { return status }
            if given == src.count { return VP8_STATUS_NOT_ENOUGH_DATA }
        }
    }

    /// A decoder configuration writing straight RGBA8 rows of `width` pixels into `buffer`.
    static func rgbaConfig(writingTo buffer: UnsafeMutableBufferPointer<UInt8>, width: Int) -> WebPDecoderConfig? {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { return nil }
        config.output.colorspace = MODE_RGBA
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = buffer.baseAddress
        config.output.u.RGBA.stride = Int32(width * 4)
        config.output.u.RGBA.size = buffer.count
        return config
    }

    static func check(_ status: VP8StatusCode) throws(ImageDecodingError) {
        guard status != VP8_STATUS_OK else { return }
        let reason = switch status {
        case VP8_STATUS_OUT_OF_MEMORY: "out of memory"
        case VP8_STATUS_INVALID_PARAM: "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported feature"
        case VP8_STATUS_SUSPENDED: "suspended"
        case VP8_STATUS_USER_ABORT: "aborted"
        case VP8_STATUS_NOT_ENOUGH_DATA: "not enough data (truncated)"
        default: "libwebp status \(status.rawValue)"
        }
        throw .corrupt(format: .webp, reason: reason)
    }
}
