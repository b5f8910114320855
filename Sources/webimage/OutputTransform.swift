import Foundation
import WebImage

/// `fetch --resize WxH --format F`: the command-line parsing of the options; the work — orient,
/// fit, encode — is the library's ``ImageExport``.
///
/// The pipeline decodes with ``decodingOptions`` (``ImageDecodingOptions/thumbnailMaxPixelSize``:
/// DCT scaling for JPEG, scaled decoding for WebP, so big JPEGs are never decoded at full size).
struct OutputTransform: Sendable {
    let export: ImageExport

    /// `nil` when neither option is given.
    init?(resize: String?, format: String?) throws {
        guard resize != nil || format != nil else { return nil }
        var export = ImageExport()
        if let resize {
            let parts = resize.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
                throw CLIError("--resize expects WIDTHxHEIGHT, such as 256x256")
            }
            export.maxSize = (parts[0], parts[1])
        }
        if let format {
            guard let parsed = ImageFormat(fileExtension: format), ImageExport.encodableFormats.contains(parsed) else {
                throw CLIError("--format expects jpeg, png, webp, gif or avif")
            }
            export.format = parsed
        }
        self.export = export
    }

    var decodingOptions: ImageDecodingOptions { export.decodingOptions }

    /// The decoded image turned upright, fitted in the box and encoded; and the output format.
    func apply(to decoded: Image) throws -> (data: Data, format: ImageFormat) { try export.export(decoded) }
}
