internal import CJPEGIncremental
internal import CTurboJPEG
public import Foundation

/// JPEG decoding and encoding over libjpeg-turbo: headers and encoding through its TurboJPEG
/// API, decoding through libjpeg's scanline API with TurboJPEG's settings (the same pixels).
///
/// Decoding goes a batch of rows at a time (the C shim turns libjpeg's errors into statuses,
/// never an `exit`), looking at `Task.isCancelled` between batches and between rows of a
/// progressive file's input, so a cancelled decode stops within milliseconds with
/// ``ImageDecodingError/cancelled``; every other failure becomes an ``ImageDecodingError`` too.
/// Progressive JPEGs with an abusive number of scans (over 500) are refused. A truncated file
/// gives what was decoded (libjpeg fills the rest grey) flagged ``Image/isPartial``; junk before
/// markers and malformed metadata segments are skipped as browsers skip them
/// (``Image/repairs``); ``ImageDecodingOptions/strict`` refuses both.
/// CMYK and YCCK files (as Photoshop writes them, Adobe-inverted) are converted to RGB through
/// their embedded CMYK profile, or the way browsers do when they have none. With ``ImageDecodingOptions/thumbnailMaxPixelSize`` the image is decoded
/// with DCT scaling at the smallest of 1/8, 1/4, 1/2 and 1/1 that stays at or above the target, then finished
/// with ``Resampler``: the full-size buffer is never allocated.
///
/// ```swift
/// let image = try JPEGCoder().decode(data, options: .default)
/// let jpeg = try JPEGCoder(progressive: true).encode(image, as: .jpeg, quality: 0.8)
/// ```
public struct JPEGCoder: ImageDecoding, ImageEncoding {
    /// Encode progressive (multi-scan) JPEGs.
    public var progressive: Bool
    /// Encode single-channel greyscale JPEGs.
    public var grayscale: Bool

    public init(progressive: Bool = false, grayscale: Bool = false) {
        self.progressive = progressive
        self.grayscale = grayscale
    }

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jpeg }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .jpeg }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        guard let handle = tjInitDecompress() else { throw .corrupt(format: .jpeg, reason: "cannot create decoder") }
        defer { tjDestroy(handle) }
        return try Self.header(handle, data).0
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        do throws(ImageDecodingError) {
            return try Self.decode(data, options: options, acceptTruncation: false)
        } catch .corrupt(.jpeg, let reason) where !options.strict && !data.suffix(2).elementsEqual([0xFF, 0xD9]) {
            // Cut inside a marker segment between progressive scans (a fatal error for libjpeg):
            // the scans before it, as browsers show them.
            guard var partial = try? Self.decode(Self.completeScans(data), options: options, acceptTruncation: true) else {
                throw .corrupt(format: .jpeg, reason: reason)
            }
            partial.repairs = .truncated
            return partial
        }
    }

    /// Decodes `data`; with `acceptTruncation` (progressive loading), a file that ends early
    /// gives what was decoded (the rest grey) instead of an error. Otherwise that happens only
    /// in lenient mode, flagged ``ImageRepairs/truncated``; strict mode refuses it, and every
    /// other libjpeg warning and malformed marker segment (``JPEGMarkerScan``).
    static func decode(_ data: Data, options: ImageDecodingOptions, acceptTruncation: Bool) throws(ImageDecodingError) -> Image {
        guard let handle = tjInitDecompress() else { throw .corrupt(format: .jpeg, reason: "cannot create decoder") }
        defer { tjDestroy(handle) }
        let (header, colorspace) = try Self.header(handle, data)
        try options.checkPixelLimit(header)
        var repairs = try options.allow(JPEGMarkerScan.repairs(in: data), in: .jpeg, "malformed marker segments")
        if Task.isCancelled { throw .cancelled }  // the scan may have stopped early for it
        let target: (width: Int, height: Int) = options.thumbnailMaxPixelSize.map {
            Resampler.fittingSize(width: header.pixelWidth, height: header.pixelHeight, maxWidth: $0, maxHeight: $0)
        } ?? (header.pixelWidth, header.pixelHeight)
        let (width, height) = Self.scaledSize(header, atLeast: target)
        let isCMYK = colorspace == TJCS_CMYK.rawValue || colorspace == TJCS_YCCK.rawValue
        let rowBytes = width * 4
        let scale = Self.scalingFactor(header, fitting: (width, height))
        func run(zeroed: Bool) throws(ImageDecodingError) -> ([UInt8], RowsProblem?) {
            // libjpeg writes every row of a successful decode, so the buffer need not be zeroed
            // first (that pass costs as much as a third of a 1 MP decode). A partial decode may
            // stop early and keeps a zeroed buffer, so no stale memory can show.
            var pixels = zeroed
                ? [UInt8](repeating: 0, count: rowBytes * height)
                : [UInt8](unsafeUninitializedCapacity: rowBytes * height) { _, count in count = rowBytes * height }
            let result = pixels.withUnsafeMutableBytes { dst in
                Result { () throws(ImageDecodingError) -> RowsProblem? in
                    try Self.decodeRows(data, into: dst, width: width, height: height, scale: scale, cmyk: isCMYK)
                }
            }
            return (pixels, try result.get())
        }
        let first = try run(zeroed: acceptTruncation)
        var pixels = first.0
        if let problem = first.1 {
            let found = try Self.check(problem, acceptTruncation: acceptTruncation, options: options)
            // A truncated file decoded into an unzeroed buffer: again into a zeroed one.
            if found.contains(.truncated), !acceptTruncation { pixels = try run(zeroed: true).0 }
            repairs.formUnion(found)
        }
        if isCMYK { Self.convertCMYK(&pixels, width: width, height: height, file: data, handling: options.colorHandling) }
        var image = Image(
            format: .jpeg, pixelWidth: width, pixelHeight: height, pixels: pixels,
            isOpaque: true, scale: options.scale, orientation: EXIFOrientation.read(fromJPEG: data))
        image.repairs = acceptTruncation ? [] : repairs
        return Resampler.resize(image, width: target.width, height: target.height)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        try image.checkEncodable(as: format, maxSide: Self.maxSide, stridesAsInt32: true)
        let q = Int32((try EncodingQuality.unit(quality, format: .jpeg) * 100).rounded())
        guard !Task.isCancelled else { throw .cancelled }
        // libjpeg's API a batch of rows at a time with TurboJPEG's settings (the same bytes as
        // `tjCompress2`), so that a cancelled render stops between batches: one call wrote 64 MP
        // of noise in about 0.5 s that nothing could stop.
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { src in
            wi_jpeg_write(
                src.baseAddress, Int32(image.pixelWidth), Int32(image.pixelHeight), image.bytesPerRow, max(q, 1),
                grayscale ? 1 : 0, progressive ? 1 : 0, { Task.isCancelled ? 1 : 0 }, &output, &size, &message, message.count)
        }
        defer { free(output) }
        switch status {
        case WI_JPEG_ROWS_OK: break
        case WI_JPEG_ROWS_STOPPED: throw .cancelled
        default: throw .encodingFailed(format: .jpeg, reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        guard let output else { throw .encodingFailed(format: .jpeg, reason: "no output") }
        return Data(bytes: output, count: Int(size))
    }

    // MARK: - Internals

    /// JPEG's largest side (16 bits in the frame header).
    static let maxSide = 65_535

    /// Writes a four-channel CMYK JPEG from packed CMYK bytes stored Adobe-inverted (0 = full
    /// ink), as Photoshop writes them; for tools and tests that need such files.
    ///
    /// ```swift
    /// let cmyk = try JPEGCoder.encode(cmyk: [255, 0, 0, 255], width: 1, height: 1, quality: 0.9)  // red
    /// ```
    public static func encode(cmyk: [UInt8], width: Int, height: Int, quality: Double) throws(ImageEncodingError) -> Data {
        // Sides first, so that the product below cannot overflow.
        guard (1...maxSide).contains(width), (1...maxSide).contains(height), cmyk.count == width * height * 4 else {
            throw .encodingFailed(format: .jpeg, reason: "CMYK buffer does not match the size")
        }
        let unitQuality = try EncodingQuality.unit(quality, format: .jpeg)
        guard let handle = tjInitCompress() else { throw .encodingFailed(format: .jpeg, reason: "cannot create encoder") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let result = cmyk.withUnsafeBufferPointer { src in
            tjCompress2(
                handle, src.baseAddress, Int32(width), Int32(width * 4), Int32(height), Int32(TJPF_CMYK.rawValue),
                &output, &size, Int32(TJSAMP_444.rawValue), Int32(max(unitQuality, 0.01) * 100), 0)
        }
        defer { if let output { tjFree(output) } }
        guard result == 0, let output else { throw .encodingFailed(format: .jpeg, reason: message(handle)) }
        return Data(bytes: output, count: Int(size))
    }

    /// The smallest DCT-scaled size that covers `target` on both sides, among the scales 1/8,
    /// 1/4, 1/2 and 1/1 only: libjpeg-turbo has SIMD inverse DCTs for those, and its other
    /// scales (3/8, 5/8, 3/4, 7/8) run scalar IDCTs of odd sizes (with 4:2:0 chroma at twice
    /// the size): a 1600 × 1200 photo decodes at 3/4 in about 1.7× the time of the whole
    /// picture at 1/1 (`djpeg -scale`). Pillow's `draft` and libvips' shrink-on-load use the
    /// same four; the resampler makes the rest of the reduction.
    static func scaledSize(_ header: ImageHeader, atLeast target: (width: Int, height: Int)) -> (Int, Int) {
        var best = (header.pixelWidth, header.pixelHeight)
        guard target.width < best.0 || target.height < best.1 else { return best }
        for factor in fastScales {
            let num = Int(factor.num), denom = Int(factor.denom)
            let w = (header.pixelWidth * num + denom - 1) / denom, h = (header.pixelHeight * num + denom - 1) / denom
            if w >= target.width, h >= target.height, w * h < best.0 * best.1 { best = (w, h) }
        }
        return best
    }

    /// The reductions ``scaledSize(_:atLeast:)`` chooses among (each is one of TurboJPEG's factors).
    static let fastScales: [(num: Int32, denom: Int32)] = [(1, 8), (1, 4), (1, 2), (1, 1)]

    /// The scaling factor TurboJPEG's `tjDecompress2` picks for an output of at most `size`: the
    /// first (largest) of its factors whose scaled size fits.
    static func scalingFactor(_ header: ImageHeader, fitting size: (width: Int, height: Int)) -> (num: Int32, denom: Int32) {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return (1, 1) }
        for factor in UnsafeBufferPointer(start: factors, count: Int(count)) {
            let num = Int(factor.num), denom = Int(factor.denom)
            let w = (header.pixelWidth * num + denom - 1) / denom, h = (header.pixelHeight * num + denom - 1) / denom
            if w <= size.width, h <= size.height { return (factor.num, factor.denom) }
        }
        return (1, 1)
    }

    private static func header(_ handle: tjhandle, _ data: Data) throws(ImageDecodingError) -> (ImageHeader, UInt32) {
        guard !data.isEmpty else { throw .empty }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let result = data.withUnsafeBytes { src in
            tjDecompressHeader3(
                handle, src.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(src.count),
                &width, &height, &subsampling, &colorspace)
        }
        // TurboJPEG 2.1 returns -1 for a header read that only warned (junk before a marker):
        // the header is good; the decode judges the warning.
        let onlyWarned = result != 0 && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
        // It also fails valid files whose sampling factors it has no name for (chroma sampled
        // more than luma, 2×1 and 1×2 mixed), after filling in the rest; libjpeg decodes them.
        let unnamedSampling = result != 0 && subsampling < 0 && colorspace >= 0
        guard result == 0 || onlyWarned || unnamedSampling, width > 0, height > 0 else {
            throw .corrupt(format: .jpeg, reason: message(handle))
        }
        var header = ImageHeader(format: .jpeg, pixelWidth: Int(width), pixelHeight: Int(height), hasAlpha: false)
        header.decoderWorkingBytes = JPEGFrameScan.coefficientBytes(in: data)
        return (header, UInt32(colorspace))
    }

    /// libjpeg's warnings (JWRN_*), which leave a complete image: browsers show such files.
    private static let harmlessWarnings: [(prefix: String, repair: ImageRepairs)] = [
        ("Corrupt JPEG data: premature end", .truncated), ("Corrupt JPEG data: bad Huffman", .damagedData),
        ("Corrupt JPEG data:", .junkBytes), ("Warning:", .damagedMetadata), ("Inconsistent progression", .damagedData),
        ("Invalid SOS parameters for sequential", .damagedData), ("Unknown Adobe color transform", .damagedMetadata),
        ("Application transferred too many", .damagedData), ("Premature end", .truncated),
    ]

    /// Turns a decode that was not clean into an error, or into what a lenient decode forgave:
    /// harmless warnings (such as extraneous bytes between markers) and a premature end (in
    /// strict mode each is an error; with `acceptTruncation`, the partial images of progressive
    /// loading, a premature end is always accepted).
    ///
    /// libjpeg's warning flag is sticky (a fatal error after a warning still reports a warning,
    /// as TurboJPEG's `TJERR_WARNING` does), so the message, which an error overwrites, decides.
    private static func check(
        _ problem: RowsProblem, acceptTruncation: Bool, options: ImageDecodingOptions
    ) throws(ImageDecodingError) -> ImageRepairs {
        let text = problem.message
        guard problem.warned, let match = harmlessWarnings.first(where: { text.hasPrefix($0.prefix) })
        else { throw .corrupt(format: .jpeg, reason: text) }
        if acceptTruncation { return match.repair }
        return try options.allow(match.repair, in: .jpeg, text)
    }

    private static func message(_ handle: tjhandle) -> String {
        guard let cString = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: cString)
    }
}
