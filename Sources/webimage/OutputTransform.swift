import Foundation
import WebImage

/// `fetch --resize WxH --format F`: turns each loaded image into a re-encoded thumbnail.
///
/// The pipeline decodes with ``decodingOptions`` (``ImageDecodingOptions/thumbnailMaxPixelSize``:
/// DCT scaling for JPEG, scaled decoding for WebP, so big JPEGs are never decoded at full size);
/// the image is then turned upright, fitted inside the box with the resampler and encoded.
struct OutputTransform: Sendable {
    /// The box the image must fit in; `nil` keeps the size.
    var box: (width: Int, height: Int)?
    /// The output format; `nil` keeps the source format when it can be encoded, else PNG.
    var format: ImageFormat?

    static let encodable: [ImageFormat] = [.jpeg, .png, .webp, .gif, .avif]

    /// `nil` when neither option is given.
    init?(resize: String?, format: String?) throws {
        guard resize != nil || format != nil else { return nil }
        if let resize {
            let parts = resize.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
                throw CLIError("--resize expects WIDTHxHEIGHT, such as 256x256")
            }
            box = (parts[0], parts[1])
        }
        if let format {
            guard let parsed = ImageFormat(fileExtension: format), Self.encodable.contains(parsed) else {
                throw CLIError("--format expects jpeg, png, webp, gif or avif")
            }
            self.format = parsed
        }
    }

    /// What the pipeline decodes with: at most the box's longest side, so JPEG and WebP decode
    /// at reduced size; one frame when the output format has no animation.
    var decodingOptions: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.thumbnailMaxPixelSize = box.map { max($0.width, $0.height) }
        options.firstFrameOnly = format == .jpeg || format == .png
        return options
    }

    /// The decoded image turned upright, fitted in the box and encoded; and the output format.
    func apply(to decoded: Image) throws -> (data: Data, format: ImageFormat) {
        let output = format ?? (Self.encodable.contains(decoded.format) ? decoded.format : .png)
        // The new file carries no EXIF tag: turn the pixels upright first.
        var image = decoded.oriented()
        if let box { image = image.resized(toFitWidth: box.width, height: box.height) }
        let quality = output == .jpeg || output == .webp || output == .avif ? 0.85 : 1
        return (try ImageCoderRegistry.default.encode(image, as: output, quality: quality), output)
    }
}
