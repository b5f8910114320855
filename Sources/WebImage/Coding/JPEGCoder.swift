internal import CTurboJPEG
public import Foundation

/// JPEG decoding and encoding over libjpeg-turbo's TurboJPEG API.
///
/// TurboJPEG reports errors by return code (never by `exit` or `longjmp`), so every failure
/// becomes an ``ImageDecodingError``. Progressive JPEGs with an abusive number of scans are
/// refused (`TJFLAG_LIMITSCANS`). A truncated file is an error, not a grey-filled image.
///
/// ```swift
/// let image = try JPEGCoder().decode(data, options: .default)
/// let jpeg = try JPEGCoder().encode(image, as: .jpeg, quality: 0.8)
/// ```
public struct JPEGCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jpeg }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .jpeg }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        guard let handle = tjInitDecompress() else { throw .corrupt(format: .jpeg, reason: "cannot create decoder") }
        defer { tjDestroy(handle) }
        return try Self.header(handle, data)
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard let handle = tjInitDecompress() else { throw .corrupt(format: .jpeg, reason: "cannot create decoder") }
        defer { tjDestroy(handle) }
        let header = try Self.header(handle, data)
        guard header.totalPixelCount <= options.maxPixelCount else {
            throw .tooManyPixels(width: header.pixelWidth, height: header.pixelHeight, frames: 1, limit: options.maxPixelCount)
        }
        let width = header.pixelWidth, height = header.pixelHeight
        let rowBytes = width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * height)
        let result = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(
                    handle, src.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(src.count),
                    dst.baseAddress, Int32(width), Int32(rowBytes), Int32(height),
                    Int32(TJPF_RGBA.rawValue), TJFLAG_LIMITSCANS)
            }
        }
        if result != 0 { try Self.check(handle) }
        return Image(
            format: .jpeg, pixelWidth: width, pixelHeight: height, pixels: pixels,
            isOpaque: true, scale: options.scale, orientation: EXIFOrientation.read(fromJPEG: data))
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageDecodingError) -> Data {
        guard let handle = tjInitCompress() else { throw .encodingFailed(format: .jpeg, reason: "cannot create encoder") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let q = Int32((min(max(quality, 0), 1) * 100).rounded())
        let result = image.pixels.withUnsafeBufferPointer { src in
            tjCompress2(
                handle, src.baseAddress, Int32(image.pixelWidth), Int32(image.bytesPerRow), Int32(image.pixelHeight),
                Int32(TJPF_RGBA.rawValue), &output, &size, Int32(TJSAMP_420.rawValue), max(q, 1), 0)
        }
        defer { if let output { tjFree(output) } }
        guard result == 0, let output else {
            throw .encodingFailed(format: .jpeg, reason: Self.message(handle))
        }
        return Data(bytes: output, count: Int(size))
    }

    // MARK: - Internals

    private static func header(_ handle: tjhandle, _ data: Data) throws(ImageDecodingError) -> ImageHeader {
        guard !data.isEmpty else { throw .empty }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let result = data.withUnsafeBytes { src in
            tjDecompressHeader3(
                handle, src.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(src.count),
                &width, &height, &subsampling, &colorspace)
        }
        guard result == 0, width > 0, height > 0 else {
            throw .corrupt(format: .jpeg, reason: message(handle))
        }
        return ImageHeader(format: .jpeg, pixelWidth: Int(width), pixelHeight: Int(height), hasAlpha: false)
    }

    /// Turns a non-zero TurboJPEG result into an error, except for harmless warnings
    /// (such as extraneous bytes between markers) that browsers also accept.
    private static func check(_ handle: tjhandle) throws(ImageDecodingError) {
        let text = message(handle)
        let isWarning = tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
        if isWarning && !text.contains("Premature end") { return }
        throw .corrupt(format: .jpeg, reason: text)
    }

    private static func message(_ handle: tjhandle) -> String {
        guard let cString = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: cString)
    }
}
