import Foundation
import Testing
@testable import WebImage

/// The APNG, BMP and ICO/CUR fixtures written by `scripts/fixtures/make-coder-fixtures.py`, each decoded
/// through the default registry and compared with its reference decode (see the script).
@Suite("APNG, BMP and ICO fixtures against reference decodes")
struct CoderFixtureTests {
    struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        var file: String
        var width: Int
        var height: Int
        var frames: Int
        var match: String
        var delays: [Int]?
        var loop: Int?
        var testDescription: String { file }
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/coders")

    static let entries: [Entry] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode([String: Entry].self, from: data)
        else { return [] }
        return manifest.values.sorted { $0.file < $1.file }
    }()

    static func data(_ file: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(file)) }

    /// The reference frames, premultiplied with the decoders' exact rounding.
    static func reference(_ entry: Entry) throws -> [[UInt8]] {
        let raw = try data((entry.file as NSString).deletingPathExtension + ".rgba")
        let size = entry.width * entry.height * 4
        #expect(raw.count == size * entry.frames)
        return (0..<entry.frames).map { index in
            var frame = [UInt8](raw[(index * size)..<((index + 1) * size)])
            _ = PixelOperations.premultiply(&frame)
            return frame
        }
    }

    @Test func manifestListsEveryFormat() {
        let extensions = Set(Self.entries.map { ($0.file as NSString).pathExtension })
        #expect(extensions == ["apng", "bmp", "ico", "cur"])
        #expect(Self.entries.count >= 40)
    }

    @Test(arguments: entries)
    func decodesLikeTheReference(_ entry: Entry) throws {
        let data = try Self.data(entry.file)
        var options = ImageDecodingOptions()
        if entry.file.hasPrefix("ico-nearest-") { options.thumbnailMaxPixelSize = entry.width }
        let image = try ImageCoderRegistry.default.decode(data, options: options)
        #expect(image.pixelWidth == entry.width && image.pixelHeight == entry.height)
        let reference = try Self.reference(entry)
        let decoded = image.frames.isEmpty ? [image.pixels] : image.frames.map(\.pixels)
        #expect(decoded.count == entry.frames)
        #expect(image.frameCount == entry.frames)
        let tolerance = entry.match.hasPrefix("within") ? Int(entry.match.dropFirst(6)) ?? 0 : 0
        for (index, (ours, theirs)) in zip(decoded, reference).enumerated() {
            let worst = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(ours.count == theirs.count && worst <= tolerance, "frame \(index): off by \(worst)")
        }
        if let delays = entry.delays {
            #expect(image.frames.map { Int($0.duration / .milliseconds(1)) } == delays)
        }
        if let loop = entry.loop { #expect(image.loopCount == loop) }
        let sniffed = ImageFormat(sniffing: data)
        #expect(sniffed == (entry.file.hasPrefix("apng") ? .apng : entry.file.hasSuffix(".bmp") ? .bmp : .ico))
        // A broken animation decodes as the still PNG inside.
        #expect(image.format == (entry.file.hasPrefix("apng-broken") ? .png : sniffed))
    }

    /// Cut short or with bytes flipped, every fixture gives a typed error or an image, never a
    /// crash; cut inside the header or the pixel data it gives a typed error (an APNG cut after
    /// its still image decodes as that still image, as in browsers).
    @Test(arguments: entries)
    func truncatedAndCorruptVariantsFailWithTypedErrors(_ entry: Entry) throws {
        let data = try Self.data(entry.file)
        for length in [1, 8, 20, 40, data.count / 2] where length < data.count {
            let cut = data.prefix(length)
            do {
                let image = try ImageCoderRegistry.default.decode(cut)
                // Only APNGs whose still image is complete still decode (as that still image).
                #expect(entry.file.hasSuffix(".apng") && image.frameCount == 1, "\(length) bytes decoded")
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
        for position in stride(from: 0, to: data.count, by: max(1, data.count / 24)) {
            var corrupt = data
            corrupt[position] ^= 0x5A
            do {
                let image = try ImageCoderRegistry.default.decode(corrupt)
                #expect(image.pixels.count >= image.pixelWidth * image.pixelHeight * 4)
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }
}
