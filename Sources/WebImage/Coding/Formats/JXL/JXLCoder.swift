internal import CJxl
public import Foundation

/// JPEG XL decoding over libjxl 0.7 (Debian `libjxl-dev`), stills and animations.
///
/// Both the bare codestream (`FF 0A`) and the ISO BMFF container are read. The file is walked
/// once for its basic info and frame headers (no pixels), so the pixel limit (canvas × frames)
/// is checked before any pixel buffer exists. Animations are coalesced by libjxl into
/// full-canvas frames, with durations from the animation's ticks (clamped as browsers do, see
/// ``ImageFrame/clampedDuration(milliseconds:)``) and the stored loop count (0 = forever).
/// Orientation is reported in ``Image/orientation``, not applied; associated alpha is handled.
/// The pixels are decoded from the file given to libjxl 64 KB at a time, with a look at
/// `Task.isCancelled` between pieces (libjxl decodes each group as soon as its bytes are in), and
/// libjxl's parallel sections run through a runner that looks before each group or row (a tiny
/// file can hold a huge image), so a cancelled task stops within a group's work and throws
/// ``ImageDecodingError/cancelled``; the image is the one a single call makes.
/// Files of more than 8 bits a sample whose pixels are not stated as sRGB are taken as 16-bit
/// samples and converted to sRGB before narrowing (`WideOutput`); the rest as 8-bit samples.
/// libjxl reports every failure by status code (Debian's build also writes a trace of it to stderr).
///
/// ```swift
/// let image = try JXLCoder().decode(data, options: .default)
/// print(image.frameCount, image.loopCount, image.orientation)
/// ```
public struct JXLCoder: ImageDecoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jpegXL }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.withInput(data) { bytes throws(ImageDecodingError) in try Self.scan(bytes).header }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try decode(data, options: options, pieceSize: Session.pieceSize)
    }

    /// `decode(_:options:)` with libjxl given the file `pieceSize` bytes at a time (`Int.max`:
    /// all at once, as one call decodes it), with a look at `Task.isCancelled` between pieces.
    func decode(_ data: Data, options: ImageDecodingOptions, pieceSize: Int) throws(ImageDecodingError) -> Image {
        if Task.isCancelled { throw .cancelled }
        return try Self.withInput(data) { bytes throws(ImageDecodingError) in
            let scan = try Self.scan(bytes, limit: options)
            try options.checkPixelLimit(scan.header)
            try Self.checkLayers(bytes, frames: scan.header.frameCount, extraChannels: scan.extraChannels, options: options)
            let width = scan.header.pixelWidth, height = scan.header.pixelHeight
            let sizing = FrameSizing(width: width, height: height, options: options)
            let limit = options.framesToDecode(of: scan.header.frameCount)
            // More than 8 bits a sample, or lossy (XYB: libjxl decodes in floats, whatever depth
            // the file states), in a colour space that converts: 16-bit output, converted before
            // narrowing (the profile is read only then).
            var wide: WideOutput?
            if scan.bitsPerSample > 8 || scan.isXYB, !scan.dataIsSRGB, let conversion = WideColorConversion.planned(
                width: width, height: height, frames: limit, bitDepth: max(scan.bitsPerSample, scan.isXYB ? 16 : 0), options: options,
                color: { EmbeddedColor.read(from: data, format: .jpegXL) }) {
                wide = try WideOutput(conversion, width: width, height: height)
            }
            let decoder = try Session(bytes, events: JXL_DEC_FRAME.rawValue | JXL_DEC_FULL_IMAGE.rawValue, pieceSize: pieceSize)
            var format = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
            var pixels: [UInt8] = []
            var frames: [ImageFrame] = []
            var duration = 0
            while frames.count < limit {
                switch try decoder.next() {
                case JXL_DEC_FRAME:
                    var frame = JxlFrameHeader()
                    if JxlDecoderGetFrameHeader(decoder.handle, &frame) == JXL_DEC_SUCCESS {
                        duration = scan.milliseconds(ticks: Int(frame.duration))
                    }
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    if let wide {
                        try wide.attach(decoder.handle)
                        continue
                    }
                    var size = 0
                    guard JxlDecoderImageOutBufferSize(decoder.handle, &format, &size) == JXL_DEC_SUCCESS,
                          size == width * height * 4 else { throw .corrupt(format: .jpegXL, reason: "unexpected frame size") }
                    // libjxl writes every pixel of a frame it reports as complete.
                    pixels = [UInt8](unsafeUninitializedCapacity: size) { _, count in count = size }
                    let status = pixels.withUnsafeMutableBytes {
                        JxlDecoderSetImageOutBuffer(decoder.handle, &format, $0.baseAddress, $0.count)
                    }
                    guard status == JXL_DEC_SUCCESS else { throw .corrupt(format: .jpegXL, reason: "output buffer refused") }
                case JXL_DEC_FULL_IMAGE:
                    if let wide { pixels = wide.frame() }
                    if scan.hasAlpha { _ = try PixelOperations.premultiplyStoppable(&pixels) }
                    frames.append(ImageFrame(pixels: sizing.shrink(pixels), duration: ImageFrame.clampedDuration(milliseconds: duration)))
                case JXL_DEC_SUCCESS:
                    guard !frames.isEmpty else { throw .corrupt(format: .jpegXL, reason: "no frame in the file") }
                    return scan.image(frames, sizing: sizing, options: options, convertedFrom: wide?.conversion.profile)
                default:
                    continue
                }
            }
            return scan.image(frames, sizing: sizing, options: options, convertedFrom: wide?.conversion.profile)
        }
    }

    /// Colour channels, bit depth, ICC profile (a colour space stated only as an ICC profile),
    /// orientation and loop count, from the headers.
    static func properties(_ data: Data) throws(ImageDecodingError) -> ImageProperties {
        try withInput(data) { bytes throws(ImageDecodingError) in
            let scan = try Self.scan(bytes)
            let model: ImageProperties.ColorModel = scan.colorChannels == 1
                ? (scan.hasAlpha ? .grayAlpha : .gray) : (scan.hasAlpha ? .rgba : .rgb)
            return ImageProperties(
                header: scan.header, colorModel: model, bitDepth: scan.bitsPerSample, hasICCProfile: scan.hasICCProfile,
                orientation: scan.orientation, loopCount: scan.header.frameCount > 1 ? scan.loopCount : nil)
        }
    }

    // MARK: - Internals

    /// What the walk over the headers found.
    struct Scan {
        var header: ImageHeader
        var hasAlpha: Bool
        var orientation: ImageOrientation
        var loopCount: Int
        var ticksPerSecond: (numerator: Int, denominator: Int)
        var bitsPerSample = 8
        /// Channels besides colour (alpha among them).
        var extraChannels = 0
        var colorChannels = 3
        var hasICCProfile = false
        /// The decoded pixels are stated as sRGB (``JXLCoder/dataIsSRGB(_:)``).
        var dataIsSRGB = false
        /// Lossy VarDCT in XYB (`uses_original_profile` 0): decoded in floats, so 16-bit output
        /// holds more than the stated bits.
        var isXYB = false

        func milliseconds(ticks: Int) -> Int {
            guard ticksPerSecond.numerator > 0 else { return 0 }
            let (product, overflow) = ticks.multipliedReportingOverflow(by: 1000 * ticksPerSecond.denominator)
            return overflow ? Int(Int32.max) : min(product / ticksPerSecond.numerator, Int(Int32.max))
        }

        /// `profile`: the frames were converted from it already (``Image/applyColor`` leaves them).
        func image(_ frames: [ImageFrame], sizing: FrameSizing, options: ImageDecodingOptions, convertedFrom profile: ColorProfile?) -> Image {
            var image = Image.decoded(
                format: .jpegXL, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
                frameCount: header.frameCount, loopCount: loopCount, scale: options.scale, knownOpaque: !hasAlpha)
            image.orientation = orientation
            image.sourceColorProfile = profile
            return image
        }
    }

    /// Basic info and the number of frames, without decoding pixels.
    /// With `limit`, one frame over its pixel limit is refused before the frames are walked.
    static func scan(_ bytes: UnsafeRawBufferPointer, limit: ImageDecodingOptions? = nil) throws(ImageDecodingError) -> Scan {
        let decoder = try Session(bytes, events: JXL_DEC_FRAME.rawValue | JXL_DEC_COLOR_ENCODING.rawValue)
        var info = JxlBasicInfo()
        guard try decoder.next() == JXL_DEC_BASIC_INFO, JxlDecoderGetBasicInfo(decoder.handle, &info) == JXL_DEC_SUCCESS,
              info.xsize > 0, info.ysize > 0
        else { throw .corrupt(format: .jpegXL, reason: "no image header") }
        try limit?.checkPixelLimit(ImageHeader(format: .jpegXL, pixelWidth: Int(info.xsize), pixelHeight: Int(info.ysize), hasAlpha: false))
        var frames = 0, hasICC = false, dataIsSRGB = false
        while true {
            let status = try decoder.next()
            if status == JXL_DEC_FRAME { frames += 1 } else if status == JXL_DEC_SUCCESS { break }
            if status == JXL_DEC_COLOR_ENCODING {
                var encoding = JxlColorEncoding()
                hasICC = JxlDecoderGetColorAsEncodedProfile(decoder.handle, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) != JXL_DEC_SUCCESS
                dataIsSRGB = Self.dataIsSRGB(decoder.handle)
            }
        }
        guard frames > 0 else { throw .corrupt(format: .jpegXL, reason: "no frame in the file") }
        let animated = info.have_animation != 0
        var scan = Scan(
            header: ImageHeader(
                format: .jpegXL, pixelWidth: Int(info.xsize), pixelHeight: Int(info.ysize), frameCount: frames,
                hasAlpha: info.alpha_bits > 0),
            hasAlpha: info.alpha_bits > 0,
            orientation: ImageOrientation(exifValue: Int(info.orientation.rawValue)),
            loopCount: animated ? Int(info.animation.num_loops) : 0,
            ticksPerSecond: animated ? (Int(info.animation.tps_numerator), Int(info.animation.tps_denominator)) : (0, 1))
        scan.bitsPerSample = Int(info.bits_per_sample)
        scan.extraChannels = Int(info.num_extra_channels)
        scan.colorChannels = Int(info.num_color_channels)
        scan.hasICCProfile = hasICC
        scan.dataIsSRGB = dataIsSRGB
        scan.isXYB = info.uses_original_profile == 0
        return scan
    }

    static func withInput<T>(
        _ data: Data, _ body: (UnsafeRawBufferPointer) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        let result = data.withUnsafeBytes { bytes -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
