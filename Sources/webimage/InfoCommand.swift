import ArgumentParser
import Foundation
import WebImage

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show an image's format, size, frames, colour model, bit depth, ICC profile and orientation.",
        discussion: """
            Reads headers only, so it works on images over the decoding pixel limit; --decode also \
            decodes every frame (the limit applies; an animation's frames are decoded one at a time, \
            so the limit is for one canvas) and reports whether the decode was lenient.
            JSON keys: format, width, height, frames, bytes, hasAlpha, orientation (1-8), decoded, and \
            when known loopCount, colorModel (gray, gray-alpha, rgb, rgba, indexed, cmyk), bitDepth, \
            iccProfile, and for a usable profile colorProfile (its description), colorSpace (rgb, gray, \
            cmyk, other) and sRGB (whether it is sRGB under another name); with --decode also lenient, partial and repairs (names of what was forgiven), and \
            width and height are the decoded image's (a HEIF rotation or crop can change them).
            """)

    @Argument(help: "An image URL or a file path.")
    var source: String

    @Flag(name: .long, help: "Print one JSON object (keys listed above).")
    var json = false

    @Flag(name: .long, help: "Decode the pixels too and report whether the decode had to be lenient.")
    var decode = false

    @Option(name: .long, help: "With --decode: srgb converts colour profiles to sRGB (default), keep or ignore leave the pixels as stored.")
    var color: String?

    /// scripts/measure/corpus-agreement compares the decoded pixels with Pillow's.
    @Option(name: .long, help: ArgumentHelp("With --decode: write the first frame's premultiplied RGBA8 rows (4 × width bytes each, top row first) to this file.", visibility: .hidden))
    var pixels: String?

    /// `webimage info --json`: absent keys are unknown for the format (or need `--decode`).
    struct Info: Codable {
        var format: String
        var width: Int
        var height: Int
        var frames: Int
        var bytes: Int
        var hasAlpha: Bool
        var orientation: Int
        var decoded: Bool
        var loopCount: Int?
        var colorModel: String?
        var bitDepth: Int?
        var iccProfile: Bool?
        var colorProfile: String?
        var colorSpace: String?
        var sRGB: Bool?
        var lenient: Bool?
        var partial: Bool?
        var repairs: [String]?
    }

    func run() async throws {
        do {
            let data = try await load()
            let properties = try ImageProperties.read(from: data)
            let header = properties.header
            var info = Info(
                format: header.format.rawValue, width: header.pixelWidth, height: header.pixelHeight,
                frames: header.frameCount, bytes: data.count, hasAlpha: header.hasAlpha, orientation: properties.orientation.rawValue,
                decoded: false, loopCount: properties.loopCount, colorModel: properties.colorModel?.rawValue,
                bitDepth: properties.bitDepth, iccProfile: properties.hasICCProfile)
            if let profile = properties.colorProfile {
                info.colorProfile = profile.description
                info.colorSpace = profile.colorSpace.rawValue
                info.sRGB = profile.isSRGB
            }
            if decode {
                guard let handling = ColorHandling(rawValue: color ?? "srgb") else { throw CLIError("--color expects srgb, keep or ignore") }
                var options = ImageDecodingOptions.default
                options.colorHandling = handling
                let decoded = try Self.walkFrames(data, pixels: pixels, options: options) ?? Self.decodeAtOnce(data, pixels: pixels, options: options)
                info.decoded = true
                (info.width, info.height) = (decoded.width, decoded.height)
                info.lenient = !decoded.repairs.isEmpty
                info.partial = decoded.repairs.contains(.truncated)
                info.repairs = decoded.repairs.names
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(info), as: UTF8.self))
            } else {
                print(TerminalText.safe(Self.line(source, info)))
            }
        } catch {
            FileHandle.standardError.write(Data("webimage info: \(source): \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// What `--decode` found: the decoded size and what a lenient decode forgave.
    struct Decoded {
        var width: Int
        var height: Int
        var repairs: ImageRepairs
    }

    /// An animation's frames decoded one at a time by its lazy decoder, each checked and
    /// dropped: memory holds a canvas or two, not every frame, so an animation is decoded
    /// whole when one canvas is within the pixel limit (the full decode counts canvas × frames).
    /// `nil` for a still image, a format without a lazy decoder, or a frame that does not decode:
    /// then ``decodeAtOnce(_:pixels:)`` says how far a lenient decode goes, or why it fails.
    static func walkFrames(_ data: Data, pixels: String?, options: ImageDecodingOptions) throws -> Decoded? {
        guard let header = try? ImageCoderRegistry.default.readHeader(data), header.frameCount > 1,
              let animation = try ImageCoderRegistry.default.animatedDecoder(for: data, options: options), animation.frameCount > 1 else { return nil }
        do {
            for index in 0..<animation.frameCount {
                let frame = try animation.frame(at: index)
                if index == 0, let pixels {
                    let first = Image(
                        format: animation.format, pixelWidth: animation.pixelWidth, pixelHeight: animation.pixelHeight,
                        pixels: frame.pixels, isOpaque: false)
                    try writeRows(of: first, to: pixels)
                }
            }
        } catch is ImageDecodingError {
            return nil
        }
        return Decoded(width: animation.pixelWidth, height: animation.pixelHeight, repairs: animation.repairs)
    }

    /// The full decode (a still image, or an animation without a lazy decoder or with a broken frame).
    static func decodeAtOnce(_ data: Data, pixels: String?, options: ImageDecodingOptions) throws -> Decoded {
        let image = try ImageCoderRegistry.default.decode(data, options: options)
        if let pixels { try writeRows(of: image, to: pixels) }
        return Decoded(width: image.pixelWidth, height: image.pixelHeight, repairs: image.repairs)
    }

    /// The first frame's rows without row padding, for `--pixels`.
    static func writeRows(of image: Image, to path: String) throws {
        let rowBytes = 4 * image.pixelWidth
        var rows = [UInt8]()
        rows.reserveCapacity(rowBytes * image.pixelHeight)
        for y in 0..<image.pixelHeight {
            let start = y * image.bytesPerRow
            rows.append(contentsOf: image.pixels[start..<(start + rowBytes)])
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(rows)) else { throw CLIError("cannot write \(path)") }
    }

    /// `photo.jpg: jpeg 1600×900, 1 frame, 123456 bytes, rgb 8-bit, ICC profile "Display P3" (rgb), orientation 6`.
    static func line(_ source: String, _ info: Info) -> String {
        var parts = ["\(info.format) \(info.width)×\(info.height)", "\(info.frames) frame\(info.frames == 1 ? "" : "s")", "\(info.bytes) bytes"]
        if let model = info.colorModel { parts.append(info.bitDepth.map { "\(model) \($0)-bit" } ?? model) }
        if let profile = info.colorProfile {
            let name = profile.isEmpty ? "unnamed" : "\"\(profile)\""
            parts.append("ICC profile \(name) (\(info.colorSpace ?? "?")\(info.sRGB == true ? ", sRGB" : ""))")
        } else if info.iccProfile == true {
            parts.append("ICC profile (unusable, ignored)")
        }
        if info.orientation != 1 { parts.append("orientation \(info.orientation) (\(ImageOrientation(exifValue: info.orientation)))") }
        if let loops = info.loopCount { parts.append(loops == 0 ? "loops forever" : "plays \(loops)×") }
        if let repairs = info.repairs {
            parts.append(repairs.isEmpty ? "decodes cleanly" : "lenient decode (\(repairs.joined(separator: ", ")))")
        }
        return "\(source): " + parts.joined(separator: ", ")
    }

    private func load() async throws -> Data {
        if let url = URL(string: source), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            return try await ImageDownloader().download(url).data
        }
        let path = source.hasPrefix("file://") ? (URL(string: source)?.path ?? source) : source
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw CLIError("no such file") }
        guard !isDirectory.boolValue else { throw CLIError("is a directory, not an image file") }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read the file") }
        return data
    }
}
