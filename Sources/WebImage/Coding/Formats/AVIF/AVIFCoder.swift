internal import CAvif
public import Foundation

/// AVIF decoding and encoding over libavif (dav1d decodes, libaom encodes): still images,
/// alpha and image sequences (`avis`).
///
/// The container is parsed first (`avifDecoderParse`: size, frame count, alpha) so the pixel
/// limit is checked before any frame is decoded; libavif also refuses sides over 32768 and
/// images over 16384² itself. Sequences keep every frame with its duration (clamped with
/// ``ImageFrame/clampedDuration(milliseconds:)``); libavif 0.11 has no loop count, so
/// ``Image/loopCount`` is 0 (forever), as browsers play AVIF sequences. Encoding is lossy at
/// `quality < 1` and lossless (identity matrix, 4:4:4, quantizer 0) at `quality >= 1`.
///
/// ```swift
/// let image = try AVIFCoder().decode(data, options: .default)
/// let avif = try AVIFCoder().encode(image, as: .avif, quality: 0.7)
/// ```
public struct AVIFCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .avif }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .avif }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try PinnedBytes.borrowing(data) { bytes throws(ImageDecodingError) in try AVIFFrames(bytes).header }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try PinnedBytes.borrowing(data) { bytes throws(ImageDecodingError) in try decode(bytes, data, options: options) }
    }

    private func decode(_ bytes: PinnedBytes, _ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        var frames = try AVIFFrames(bytes, strict: options.strict)
        let header = frames.header
        try options.checkPixelLimit(header)
        let sizing = frames.size(for: options)
        let count = options.framesToDecode(of: header.frameCount)
        frames.wide = WideColorConversion.planned(
            width: header.pixelWidth, height: header.pixelHeight, frames: count, bitDepth: frames.depth, options: options
        ) { EmbeddedColor.read(from: data, format: .avif) }
        let decoded = try frames.frames(limit: count)
        var image = Image.decoded(
            format: .avif, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: decoded,
            frameCount: header.frameCount, loopCount: 0, scale: options.scale, knownOpaque: !header.hasAlpha)
        image.repairs = frames.repairs
        image.sourceColorProfile = frames.wide?.profile  // converted already: applyColor leaves it
        return image
    }

    /// An ``AVIFAnimationDecoder`` over `data` (a still AVIF gives one frame).
    public func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        try AVIFAnimationDecoder(data, options: options)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        // AV1's largest side is 65536; within it the `UInt32` sides and row bytes cannot overflow.
        try image.checkEncodable(as: format, maxSide: 65_536)
        let unitQuality = try EncodingQuality.unit(quality, format: .avif)
        try CodecLibrary.avif.checkEncoding(.avif)
        guard let encoder = avifEncoderCreate() else { throw .encodingFailed(format: .avif, reason: "cannot create encoder") }
        defer { avifEncoderDestroy(encoder) }
        let lossless = unitQuality >= 1
        let quantizer = lossless ? Int32(AVIF_QUANTIZER_LOSSLESS) : Int32(((1 - unitQuality) * 63).rounded())
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = lossless ? quantizer : 0
        encoder.pointee.maxQuantizerAlpha = lossless ? quantizer : 0
        encoder.pointee.speed = 8
        encoder.pointee.maxThreads = 1
        encoder.pointee.timescale = 1000
        let stills = image.frames.isEmpty ? [image] : image.frames.indices.map { image.frame(at: $0) }
        for (index, still) in stills.enumerated() {
            guard !Task.isCancelled else { throw .cancelled }
            let frame = try Self.yuvImage(still, lossless: lossless)
            defer { avifImageDestroy(frame) }
            // 1 ms … Int32.max ms a frame: a caller's Duration can be anything, and libavif adds
            // the durations up in 64 bits.
            let milliseconds = image.frames.isEmpty ? 1 : image.frames[index].duration.wholeMilliseconds(clampedTo: 1...Int(Int32.max))
            // Lossless sequences are all key frames: libaom 3.6's lossless inter frames were measured
            // to alter pixels (AVIFTests.sequenceKeepsFramesAndDurations).
            let flags = stills.count == 1 ? AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue
                : lossless ? AVIF_ADD_IMAGE_FLAG_FORCE_KEYFRAME.rawValue : AVIF_ADD_IMAGE_FLAG_NONE.rawValue
            try Self.checkEncoding(avifEncoderAddImage(encoder, frame, UInt64(milliseconds), avifAddImageFlags(flags)))
        }
        var output = avifRWData(data: nil, size: 0)
        defer { avifRWDataFree(&output) }
        try Self.checkEncoding(avifEncoderFinish(encoder, &output))
        guard let bytes = output.data else { throw .encodingFailed(format: .avif, reason: "no output") }
        return Data(bytes: bytes, count: output.size)
    }

    // MARK: - Internals

    /// Straight RGBA8 of the decoder's current frame.
    static func rgba(_ image: UnsafeMutablePointer<avifImage>) throws(ImageDecodingError) -> [UInt8] {
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        // libavif writes every pixel of a successful conversion (a failure throws the buffer away),
        // so it need not be zeroed first.
        // The sides were checked against the pixel limit (through the header), and libavif caps
        // them (16384 × 16384 by default); the products are checked all the same.
        let (area, overflowArea) = Int(rgb.width).multipliedReportingOverflow(by: Int(rgb.height))
        let (count, overflowCount) = area.multipliedReportingOverflow(by: 4)
        guard !overflowArea, !overflowCount, let rowBytes = UInt32(exactly: Int(rgb.width) * 4) else {
            throw .corrupt(format: .avif, reason: "image of \(rgb.width) × \(rgb.height) too large")
        }
        var pixels = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        let status = pixels.withUnsafeMutableBufferPointer { out in
            rgb.pixels = out.baseAddress
            rgb.rowBytes = rowBytes
            return avifImageYUVToRGB(image, &rgb)
        }
        try check(status)
        return pixels
    }

    /// An 8-bit YUV image of `image` (caller destroys it): 4:4:4 identity for lossless, else 4:2:0.
    private static func yuvImage(_ image: Image, lossless: Bool) throws(ImageEncodingError) -> UnsafeMutablePointer<avifImage> {
        let format = lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420
        guard let yuv = avifImageCreate(UInt32(image.pixelWidth), UInt32(image.pixelHeight), 8, format) else {
            throw .encodingFailed(format: .avif, reason: "cannot create image")
        }
        if lossless {
            yuv.pointee.matrixCoefficients = avifMatrixCoefficients(AVIF_MATRIX_COEFFICIENTS_IDENTITY)
            yuv.pointee.yuvRange = AVIF_RANGE_FULL
        }
        if let profile = image.colorProfile {  // kept by decoding (ColorHandling.keep): embedded
            profile.data.withUnsafeBytes { avifImageSetProfileICC(yuv, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
        }
        var straight = try PixelOperations.unpremultipliedStoppable(image)
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, yuv)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        rgb.ignoreAlpha = image.isOpaque ? AVIF_TRUE : AVIF_FALSE
        let status = straight.withUnsafeMutableBufferPointer { src in
            rgb.pixels = src.baseAddress
            rgb.rowBytes = UInt32(image.pixelWidth * 4)
            return avifImageRGBToYUV(yuv, &rgb)
        }
        guard status == AVIF_RESULT_OK else {
            avifImageDestroy(yuv)
            throw .encodingFailed(format: .avif, reason: String(cString: avifResultToString(status)))
        }
        return yuv
    }

    static func check(_ result: avifResult) throws(ImageDecodingError) {
        guard result != AVIF_RESULT_OK else { return }
        throw .corrupt(format: .avif, reason: String(cString: avifResultToString(result)))
    }

    private static func checkEncoding(_ result: avifResult) throws(ImageEncodingError) {
        guard result != AVIF_RESULT_OK else { return }
        throw .encodingFailed(format: .avif, reason: String(cString: avifResultToString(result)))
    }
}
