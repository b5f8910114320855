import Foundation
import WebImage

/// `fetch --process SPEC --resize WxH --format F --quality Q`: the command-line parsing of the options. The
/// processors run in the pipeline (so processed variants are shared and cached under their image
/// key); orienting, fitting and encoding are the library's ``ImageExport``.
///
/// The pipeline decodes with ``decodingOptions`` (``ImageDecodingOptions/thumbnailMaxPixelSize``:
/// DCT scaling for JPEG, scaled decoding for WebP, so big JPEGs are never decoded at full size).
struct OutputTransform: Sendable {
    let export: ImageExport
    /// From `--process`, applied by the pipeline.
    let processors: [any ImageProcessing]

    /// `nil` when no option is given.
    /// What decoding does with colour profiles (`--color`).
    var colorHandling: ColorHandling = .convertToSRGB

    init?(resize: String?, format: String?, process: String? = nil, quality: Int? = nil, color: String? = nil) throws {
        if let color {
            guard let handling = ColorHandling(rawValue: color) else { throw CLIError("--color expects srgb, keep or ignore") }
            colorHandling = handling
        }
        guard resize != nil || format != nil || process != nil else {
            // Originals are written as downloaded: there is nothing to encode.
            if quality != nil { throw CLIError("--quality applies to re-encoded output: add --resize, --format or --process") }
            if color != nil { throw CLIError("--color applies to re-encoded output (originals are written as downloaded): add --resize, --format or --process") }
            return nil
        }
        var export = ImageExport()
        if let quality {
            guard (1...100).contains(quality) else { throw CLIError("--quality expects 1 to 100, such as 85") }
            export.lossyQuality = Double(quality) / 100
        }
        do {
            processors = try process.map(ImageProcessorSpec.parse) ?? []
        } catch {
            throw CLIError("--process: \(error)")
        }
        if let resize {
            let parts = resize.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
                throw CLIError("--resize expects WIDTHxHEIGHT, such as 256x256")
            }
            export.maxSize = (parts[0], parts[1])
        }
        if let format {
            guard let parsed = ImageFormat(fileExtension: format), ImageExport.encodableFormats.contains(parsed) else {
                throw CLIError("--format expects jpeg, png, webp, gif, avif or apng")
            }
            export.format = parsed
        }
        self.export = export
    }

    /// At most the box's longest side when nothing is processed (JPEG and WebP then decode at
    /// reduced size); one frame when the output format has no animation.
    var decodingOptions: ImageDecodingOptions {
        var options = export.decodingOptions
        if !processors.isEmpty { options.thumbnailMaxPixelSize = nil }
        options.colorHandling = colorHandling
        return options
    }

    /// Whether an animated source is written frame by frame (``ImageExport/exportAnimation(_:options:coders:)``):
    /// the output format keeps animations and has an animated encoder (GIF, WebP, APNG, or the
    /// source's own format).
    var streamsAnimations: Bool {
        !decodingOptions.firstFrameOnly && [nil, .gif, .webp, .apng].contains(export.format)
    }

    /// The decoded image turned upright, fitted in the box and encoded; and the output format.
    func apply(to decoded: Image) throws -> (data: Data, format: ImageFormat) { try export.export(decoded) }
}
