public import Foundation
public import WebImage

/// The operator's watermark image (`serve --watermark PATH`, imgproxy's `IMGPROXY_WATERMARK_PATH`):
/// read and decoded once, at startup, within fixed limits, then blended over results that ask
/// for it with `wm=` (``ImageParameters/WatermarkOptions``, `WatermarkStep`).
///
/// Any format the decoders read; the first frame of an animation; orientation applied, colours
/// converted to sRGB. The file's SHA-256 is part of every watermarked result's cache key, so a
/// new watermark file is never served from results of the old one.
///
/// ```swift
/// let mark = try ServerWatermark(data: try Data(contentsOf: URL(fileURLWithPath: "logo.png")))
/// var configuration = ImageServerConfiguration()
/// configuration.watermark = mark
/// ```
public struct ServerWatermark: Sendable {
    /// Why a watermark file cannot be used: the server refuses to start with it.
    public struct InvalidWatermark: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The largest watermark file (4 MB) and picture (4096 × 4096 pixels).
    public static let maxBytes = 4 << 20
    public static let maxPixels = 4096 * 4096

    /// The decoded watermark, upright, premultiplied RGBA.
    public let image: Image
    /// ``image``, then halvings of it down to 32 pixels a side, made at startup: a mark scaled
    /// for a result is resized from the smallest that still covers the size asked, so the work
    /// follows the result's size, not the mark's (a 4096² mark scaled for a 1 × 1 result read all
    /// 16.7 MP on every request: 3 s of CPU in a debug build; red team, stop 53).
    let levels: [Image]
    /// The first 16 bytes of the file's SHA-256, in hexadecimal.
    public let digest: String

    public init(data: Data) throws(InvalidWatermark) {
        guard data.count <= Self.maxBytes else {
            throw InvalidWatermark(description: "the watermark is \(data.count) bytes, over the limit of \(Self.maxBytes)")
        }
        var options = ImageDecodingOptions(maxPixelCount: Self.maxPixels, firstFrameOnly: true)
        options.colorHandling = .convertToSRGB
        let decoded: Image
        do {
            decoded = try ImageCoderRegistry.default.decode(data, options: options)
        } catch {
            throw InvalidWatermark(description: "the watermark cannot be decoded: \(error.description)")
        }
        let upright = decoded.oriented()
        guard upright.pixelWidth > 0, upright.pixelHeight > 0, upright.pixelWidth * upright.pixelHeight <= Self.maxPixels else {
            throw InvalidWatermark(description: "the watermark must be 1 to \(Self.maxPixels) pixels")
        }
        image = upright
        levels = Self.halvings(of: upright)
        digest = Hex.lowercase(SHA256.hash(data).prefix(16))
    }

    /// `image` and its halvings while both sides stay at least 32 pixels (a third more memory).
    static func halvings(of image: Image) -> [Image] {
        var levels = [image]
        while let last = levels.last, last.pixelWidth >= 64, last.pixelHeight >= 64,
              let half = try? last.processed(by: [ImageProcessors.Resize(width: last.pixelWidth / 2, height: last.pixelHeight / 2, mode: .exact)]) {
            levels.append(half)
        }
        return levels
    }

    /// The smallest level at least `width` × `height` (the full image when none is smaller).
    func level(covering width: Int, _ height: Int) -> Image {
        levels.last { $0.pixelWidth >= width && $0.pixelHeight >= height } ?? image
    }

    /// The file at `path`, read only up to the size limit.
    public init(contentsOf path: String) throws(InvalidWatermark) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw InvalidWatermark(description: "cannot read the watermark file \(path)")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: Self.maxBytes + 1) ?? Data() } catch {
            throw InvalidWatermark(description: "cannot read the watermark file \(path)")
        }
        try self.init(data: data)
    }
}
