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
        try Self.withDecoder(data, strict: false) { decoder, _ throws(ImageDecodingError) in Self.header(decoder) }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try Self.withDecoder(data, strict: options.strict) { decoder, repairs throws(ImageDecodingError) in
            let header = Self.header(decoder)
            try options.checkPixelLimit(header)
            let sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
            var frames: [ImageFrame] = []
            while frames.count < (options.firstFrameOnly ? 1 : header.frameCount) {
                try Self.check(avifDecoderNextImage(decoder))
                guard let image = decoder.pointee.image, Int(image.pointee.width) == header.pixelWidth,
                      Int(image.pointee.height) == header.pixelHeight else {
                    throw .corrupt(format: .avif, reason: "frame size differs from the container's")
                }
                var pixels = try Self.rgba(image)
                if header.hasAlpha { _ = PixelOperations.premultiply(&pixels) }
                let milliseconds = Int((decoder.pointee.imageTiming.duration * 1000).rounded())
                frames.append(ImageFrame(pixels: sizing.shrink(pixels), duration: ImageFrame.clampedDuration(milliseconds: milliseconds)))
            }
            var image = Image.decoded(
                format: .avif, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
                frameCount: header.frameCount, loopCount: 0, scale: options.scale, knownOpaque: !header.hasAlpha)
            image.repairs = repairs
            return image
        }
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        try image.checkEncodable(as: format)
        try CodecLibrary.avif.checkEncoding(.avif)
        guard let encoder = avifEncoderCreate() else { throw .encodingFailed(format: .avif, reason: "cannot create encoder") }
        defer { avifEncoderDestroy(encoder) }
        let lossless = quality >= 1
        let quantizer = lossless ? Int32(AVIF_QUANTIZER_LOSSLESS) : Int32(((1 - min(max(quality, 0), 1)) * 63).rounded())
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = lossless ? quantizer : 0
        encoder.pointee.maxQuantizerAlpha = lossless ? quantizer : 0
        encoder.pointee.speed = 8
        encoder.pointee.maxThreads = 1
        encoder.pointee.timescale = 1000
        let stills = image.frames.isEmpty ? [image] : image.frames.indices.map { image.frame(at: $0) }
        for (index, still) in stills.enumerated() {
            let frame = try Self.yuvImage(still, lossless: lossless)
            defer { avifImageDestroy(frame) }
            let milliseconds = image.frames.isEmpty ? 1 : max(1, Int(image.frames[index].duration / .milliseconds(1)))
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

    /// A parsed decoder over `data`, which stays pinned while `body` runs; `body` also gets what
    /// parsing had to forgive.
    private static func withDecoder<T>(
        _ data: Data, strict: Bool,
        _ body: (UnsafeMutablePointer<avifDecoder>, ImageRepairs) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        try CodecLibrary.avif.checkDecoding(.avif)
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                let (decoder, repairs) = try parsed(raw, strict: strict)
                defer { avifDecoderDestroy(decoder) }
                return .success(try body(decoder, repairs))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// A decoder that parsed `raw` with libavif's strict checks, or else without them: a file
    /// breaking a rule browsers overlook (no `pixi` property, an invalid `clap`, an alpha item
    /// without `ispe`) parses, noted as ``ImageRepairs/damagedMetadata``, unless `strict`.
    private static func parsed(
        _ raw: UnsafeRawBufferPointer, strict: Bool
    ) throws(ImageDecodingError) -> (UnsafeMutablePointer<avifDecoder>, ImageRepairs) {
        do throws(ImageDecodingError) {
            return (try parse(raw, strictFlags: AVIF_STRICT_ENABLED), [])
        } catch {
            guard let lenient = try? parse(raw, strictFlags: AVIF_STRICT_DISABLED) else { throw error }
            if strict {
                avifDecoderDestroy(lenient)
                throw .refusedInStrictMode(format: .avif, repairs: .damagedMetadata, reason: "\(error)")
            }
            return (lenient, .damagedMetadata)
        }
    }

    /// A new decoder (the caller destroys it) that has parsed `raw` under `strictFlags`.
    private static func parse(
        _ raw: UnsafeRawBufferPointer, strictFlags: avifStrictFlag
    ) throws(ImageDecodingError) -> UnsafeMutablePointer<avifDecoder> {
        guard let decoder = avifDecoderCreate() else { throw .corrupt(format: .avif, reason: "cannot create decoder") }
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        decoder.pointee.strictFlags = strictFlags.rawValue
        do throws(ImageDecodingError) {
            try check(avifDecoderSetIOMemory(decoder, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count))
            try check(avifDecoderParse(decoder))
        } catch {
            avifDecoderDestroy(decoder)
            throw error
        }
        return decoder
    }

    private static func header(_ decoder: UnsafeMutablePointer<avifDecoder>) -> ImageHeader {
        let image = decoder.pointee.image!.pointee
        return ImageHeader(
            format: .avif, pixelWidth: Int(image.width), pixelHeight: Int(image.height),
            frameCount: max(Int(decoder.pointee.imageCount), 1), hasAlpha: decoder.pointee.alphaPresent != 0)
    }

    /// Straight RGBA8 of the decoder's current frame.
    private static func rgba(_ image: UnsafeMutablePointer<avifImage>) throws(ImageDecodingError) -> [UInt8] {
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        // libavif writes every pixel of a successful conversion (a failure throws the buffer away),
        // so it need not be zeroed first.
        let count = Int(rgb.width) * Int(rgb.height) * 4
        var pixels = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        let status = pixels.withUnsafeMutableBufferPointer { out in
            rgb.pixels = out.baseAddress
            rgb.rowBytes = rgb.width * 4
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
        var straight = PixelOperations.unpremultiplied(image)
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

    private static func check(_ result: avifResult) throws(ImageDecodingError) {
        guard result != AVIF_RESULT_OK else { return }
        throw .corrupt(format: .avif, reason: String(cString: avifResultToString(result)))
    }

    private static func checkEncoding(_ result: avifResult) throws(ImageEncodingError) {
        guard result != AVIF_RESULT_OK else { return }
        throw .encodingFailed(format: .avif, reason: String(cString: avifResultToString(result)))
    }
}
