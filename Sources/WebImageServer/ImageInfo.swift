import Foundation
import WebImage

/// `/info`'s answer, encoded with `JSONEncoder`: what the source is and what a page needs to
/// lay it out and draw a placeholder before it arrives.
struct ImageInfo: Codable, Sendable {
    /// The sniffed format (`jpeg`, `png`, …).
    var format: String
    /// The size upright (EXIF orientation applied), as a page lays the picture out.
    var width: Int
    var height: Int
    /// Frames in the file (1 for a still image).
    var frames: Int
    var hasAlpha: Bool
    /// The colour profile the file declares (its description); absent for untagged (sRGB) files.
    var colorProfile: String?
    /// The average colour, alpha-weighted, as `#rrggbb` (sRGB).
    var averageColor: String
    var blurHash: String
    /// ThumbHash bytes in standard base64, unpadded.
    var thumbHash: String

    /// How `/info` decodes: the first frame, converted to sRGB, at most 100 pixels a side (all
    /// the hashes use; JPEG and WebP decode at a reduced scale).
    static func decodingOptions(maxPixels: Int) -> ImageDecodingOptions {
        var options = ImageDecodingOptions(maxPixelCount: maxPixels, firstFrameOnly: true)
        options.colorHandling = .convertToSRGB
        options.thumbnailMaxPixelSize = ThumbHash.maxEncodedSide
        return options
    }

    /// Decodes `source` with `options` (``decodingOptions(maxPixels:)``) and describes it.
    init(
        _ source: Data, header: ImageHeader, options: ImageDecodingOptions, components: (x: Int, y: Int), coders: ImageCoderRegistry = .default
    ) throws(ImageServerError) {
        let image: Image
        do { image = try coders.decode(source, options: options) } catch { throw ImageServerError(error) }
        let swaps = image.orientation.swapsWidthAndHeight
        format = header.format.rawValue
        width = swaps ? header.pixelHeight : header.pixelWidth
        height = swaps ? header.pixelWidth : header.pixelHeight
        frames = max(1, header.frameCount)
        hasAlpha = !image.isOpaque
        colorProfile = image.sourceColorProfile?.description
        do throws(PlaceholderError) {
            averageColor = "#" + String(try image.averageColor().hex.prefix(6))
            blurHash = try image.blurHash(components: components).string
            thumbHash = try image.thumbHash().base64String
        } catch {
            throw ImageServerError(status: 422, code: "unprocessable", message: error.description)
        }
    }
}
