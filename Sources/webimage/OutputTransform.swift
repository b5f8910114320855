import Foundation
import WebImage

/// `fetch --resize WxH --format F`: turns the downloaded bytes into a re-encoded thumbnail.
///
/// The thumbnail is decoded straight from the original bytes with
/// ``ImageDecodingOptions/thumbnailMaxPixelSize`` (DCT scaling for JPEG, scaled decoding for
/// WebP), fitted inside the box with the resampler, and encoded through the registry.
struct OutputTransform: Sendable {
    /// The box the image must fit in; `nil` keeps the size.
    var box: (width: Int, height: Int)?
    /// The output format; `nil` keeps the source format when it can be encoded, else PNG.
    var format: ImageFormat?

    static let encodable: [ImageFormat] = [.jpeg, .png, .webp, .gif]

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
                throw CLIError("--format expects jpeg, png, webp or gif")
            }
            self.format = parsed
        }
    }

    /// The re-encoded bytes and their format.
    func apply(to data: Data, sourceFormat: ImageFormat) throws -> (data: Data, format: ImageFormat) {
        let coders = ImageCoderRegistry.default
        var options = ImageDecodingOptions()
        if let box {
            let header = try coders.readHeader(data)
            // Fitting the stored size into the box turned the same way gives the same longest side.
            let turned = sourceFormat == .jpeg && EXIFOrientation.read(fromJPEG: data) >= 5
            let fit = Resampler.fittingSize(
                width: header.pixelWidth, height: header.pixelHeight,
                maxWidth: turned ? box.height : box.width, maxHeight: turned ? box.width : box.height)
            options.thumbnailMaxPixelSize = max(fit.width, fit.height)
        }
        let output = format ?? (Self.encodable.contains(sourceFormat) ? sourceFormat : .png)
        options.firstFrameOnly = output == .jpeg || output == .png
        // The new file carries no EXIF tag: turn the pixels upright first.
        var image = try coders.decode(data, options: options).oriented()
        if let box { image = image.resized(toFitWidth: box.width, height: box.height) }
        let quality = output == .jpeg || output == .webp ? 0.85 : 1
        return (try coders.encode(image, as: output, quality: quality), output)
    }
}
