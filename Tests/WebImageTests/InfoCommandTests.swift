import Foundation
import Testing
import WebImage

@Suite("webimage info: headers, metadata, --decode")
struct InfoCommandTests {
    struct Info: Decodable {
        var format: String
        var width, height, frames, bytes, orientation: Int
        var hasAlpha, decoded: Bool
        var loopCount, bitDepth: Int?
        var colorModel: String?
        var iccProfile, lenient, partial: Bool?
        var repairs: [String]?
    }

    static func info(_ file: String, _ arguments: [String] = []) async throws -> Info {
        let result = try await WebImageCommand.run(["info", CodecFixtures.directory.appendingPathComponent(file).path, "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(Info.self, from: Data(result.stdout.utf8))
    }

    @Test func reportsNewFormatsWithTheirMetadata() async throws {
        let tiff = try await Self.info("tiff-multipage.tif")
        #expect(tiff.format == "tiff" && tiff.frames == 3 && tiff.colorModel == "rgb" && tiff.bitDepth == 8 && !tiff.decoded)
        let grey16 = try await Self.info("tiff-grey16.tif")
        #expect(grey16.colorModel == "gray" && grey16.bitDepth == 16)
        let oriented = try await Self.info("tiff-orientation6.tif")
        #expect(oriented.orientation == 6 && oriented.width == 40)
        let jxl = try await Self.info("jxl-animated.jxl")
        #expect(jxl.format == "jxl" && jxl.frames == 3 && jxl.loopCount == 0 && jxl.colorModel == "rgba" && jxl.iccProfile == false)
        let alpha = try await Self.info("jxl-alpha.jxl")
        #expect(alpha.colorModel == "rgba" && alpha.hasAlpha)
        let png = try await Self.info("exif-orientation6.png")
        #expect(png.orientation == 6 && png.colorModel == "rgb" && png.bitDepth == 8 && png.iccProfile == false)
        let webp = try await Self.info("exif-orientation3.webp")
        #expect(webp.orientation == 3 && webp.colorModel == "rgba")
        let gif = try await Self.info("lenient-gif-clean.gif")
        #expect(gif.colorModel == "indexed" && gif.frames == 2 && gif.loopCount == 0)
        let jpeg = try await Self.info("lenient-jpeg-clean.jpg")
        #expect(jpeg.colorModel == "rgb" && jpeg.bitDepth == 8 && jpeg.lenient == nil)
    }

    @Test func decodeReportsLeniency() async throws {
        let junk = try await Self.info("lenient-jpeg-junk.jpg", ["--decode"])
        #expect(junk.decoded && junk.lenient == true && junk.partial == false && junk.repairs == ["junk-bytes"])
        let cut = try await Self.info("lenient-png-truncated.png", ["--decode"])
        #expect(cut.lenient == true && cut.partial == true && cut.repairs == ["truncated"])
        let clean = try await Self.info("lenient-gif-clean.gif", ["--decode"])
        #expect(clean.lenient == false && clean.repairs == [])
        let text = try await WebImageCommand.run(["info", CodecFixtures.directory.appendingPathComponent("lenient-gif-no-trailer.gif").path, "--decode"])
        #expect(text.stdout.contains(": gif 40×30, 2 frames, "))
        #expect(text.stdout.hasSuffix(" bytes, indexed 2-bit, loops forever, lenient decode (missing-trailer)\n"))
    }

    @Test func pixelsOptionWritesTheDecodedFirstFrame() async throws {
        // scripts/measure/corpus-agreement compares these rows with Pillow's decode.
        let file = temporaryDirectory().appendingPathComponent("rows.rgba")
        let info = try await Self.info("lenient-gif-clean.gif", ["--decode", "--pixels", file.path])
        let image = try ImageCoderRegistry.default.decode(CodecFixtures.data("lenient-gif-clean.gif"))
        #expect(info.width == image.pixelWidth && info.height == image.pixelHeight && image.frames.count == 2)
        #expect(try Data(contentsOf: file) == Data(image.frames[0].pixels))
    }

    @Test func headersWorkOverThePixelLimit() async throws {
        let file = temporaryDirectory().appendingPathComponent("huge.png")
        try PNGBomb.header(width: 100_000, height: 100_000).write(to: file)
        let result = try await WebImageCommand.run(["info", file.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let info = try JSONDecoder().decode(Info.self, from: Data(result.stdout.utf8))
        #expect(info.width == 100_000 && info.height == 100_000 && !info.decoded)
        let decoded = try await WebImageCommand.run(["info", file.path, "--decode"])
        #expect(decoded.status == 1 && decoded.stderr.contains("over the limit"))
    }
}
