import Foundation
import Testing
import WebImage

/// Colour stated by every other source than an embedded profile in JPEG/PNG/WebP/TIFF — AVIF and
/// HEIF `colr` (ICC and nclx), PNG `gAMA` + `cHRM`, JPEG XL colour encodings, BMP V5 profiles and
/// calibrated RGB, CMYK JPEGs with a CMYK profile — against references written by
/// `scripts/fixtures/make-color-fixtures.py` (`scripts/fixtures/color_sources.py`): numpy from the definitions
/// (`math`), pyvips `icc_transform` (`vips`) and Pillow ImageCms (`pillow`). Mean error ≤ 2
/// levels per channel against each; sRGB-equivalent and unsupported statements stay untagged.
@Suite("Colour management: sources", .cpuBound)
struct ColorSourcesTests {
    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        let file: String
        let expect: String
        let references: [String]
        let description: String
        var testDescription: String { file }
    }

    static let directory = ColorManagementTests.directory.appendingPathComponent("sources")
    static let cases: [Case] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
              let cases = try? JSONDecoder().decode([Case].self, from: data) else { return [] }
        return cases
    }()

    static func load(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    static func decode(_ data: Data, _ handling: ColorHandling = .convertToSRGB) throws -> Image {
        var options = ImageDecodingOptions.default
        options.colorHandling = handling
        return try ImageCoderRegistry.default.decode(data, options: options)
    }

    @Test func fixturesArePresent() {
        #expect(Self.cases.filter { $0.expect == "converted" }.count >= 14)
        #expect(Self.cases.filter { $0.expect == "untagged" }.count >= 7)
    }

    @Test(arguments: cases.filter { $0.expect == "converted" })
    func convertedLikeTheReferences(_ fixture: Case) throws {
        let data = try Self.load(fixture.file)
        let image = try Self.decode(data)
        let profile = try #require(image.sourceColorProfile, "no colour read from \(fixture.file)")
        #expect(profile.description.contains(fixture.description), "\(profile.description)")
        #expect(!fixture.description.isEmpty)
        #expect(!profile.isSRGB)
        #expect(image.repairs.isEmpty)
        #expect(!fixture.references.isEmpty)
        for reference in fixture.references {
            let expected = try Self.decode(try Self.load("\(fixture.file).\(reference).png"))
            let error = ColorManagementTests.meanError(image, expected)
            #expect(error <= 2, "\(fixture.file) against \(reference): mean error \(error)")
        }
        // The conversion did something, and `info`'s header read states the same colour space.
        #expect(try Self.decode(data, .ignore).pixels != image.pixels)
        #expect(try ImageProperties.read(from: data).colorProfile == profile)
    }

    @Test(arguments: cases.filter { $0.expect == "untagged" })
    func sRGBAndUnsupportedStatementsStayUntagged(_ fixture: Case) throws {
        let data = try Self.load(fixture.file)
        let image = try Self.decode(data)
        #expect(image.sourceColorProfile == nil && image.colorProfile == nil)
        #expect(image.repairs.isEmpty)
        #expect(image.pixels == (try Self.decode(data, .ignore)).pixels)
        #expect(try ImageProperties.read(from: data).colorProfile == nil)
    }

    /// `keep` leaves the pixels as stored and carries the built profile (nclx has no bytes of its own).
    @Test func keepCarriesTheBuiltProfile() throws {
        let data = try Self.load("avif-nclx-p3.avif")
        let kept = try Self.decode(data, .keep)
        #expect(kept.pixels == (try Self.decode(data, .ignore)).pixels)
        let profile = try #require(kept.colorProfile)
        #expect(profile.colorSpace == .rgb && profile.description == "Display P3 (nclx 12/13)")
        // The built profile is a real ICC profile: it reads back as itself.
        #expect(ColorProfile(iccData: profile.data) == profile)
        // Built once: the same statement gives the same bytes (the transform cache keys on them).
        #expect(try Self.decode(try Self.load("heif-nclx-p3.heif"), .keep).colorProfile == profile)
    }

    /// Display P3 shares sRGB's white and curve: greys are unchanged, colours are not.
    @Test func displayP3KeepsGreysAndMovesColours() throws {
        let data = try Self.load("avif-nclx-p3.avif")
        let image = try Self.decode(data), stored = try Self.decode(data, .ignore)
        for x in stride(from: 0, to: 64, by: 7) {
            let grey = image.pixel(x: x, y: 40), original = stored.pixel(x: x, y: 40)  // the grey ramp
            #expect(abs(Int(grey.r) - Int(original.r)) <= 1 && grey.r == grey.g && grey.g == grey.b, "\(grey) from \(original)")
        }
        var moved = 0  // the largest change along the hue ramp
        for x in 0..<64 {
            let hue = image.pixel(x: x, y: 24), storedHue = stored.pixel(x: x, y: 24)
            let change: Int = abs(Int(hue.r) - Int(storedHue.r)) + abs(Int(hue.g) - Int(storedHue.g)) + abs(Int(hue.b) - Int(storedHue.b))
            moved = max(moved, change)
        }
        #expect(moved > 20)
    }

    /// A YCCK file (TurboJPEG writes CMYK as YCCK) carrying ghostscript's CMYK profile over three
    /// APP2 markers converts through the profile like Pillow's ImageCms; without the profile, or
    /// with `ignore`, the fixed formula stays. `keep` converts through the profile as well (to
    /// sRGB, untagged): a CMYK profile cannot travel with the RGB pixels the decoder makes.
    @Test func ycckConvertsThroughItsCMYKProfile() throws {
        let inks = [UInt8](try Self.load("cmyk-default.inverted.raw"))
        let ycck = try JPEGCoder.encode(cmyk: inks, width: 64, height: 48, quality: 1)
        let profile = try #require(try Self.decode(try Self.load("jpeg-cmyk-default.jpg")).sourceColorProfile)
        #expect(profile.colorSpace == .cmyk)
        let tagged = Self.withICC(ycck, profile.data)
        let image = try Self.decode(tagged)
        #expect(image.sourceColorProfile == profile)
        let expected = try Self.decode(try Self.load("cmyk-default.inverted.raw.pillow.png"))
        let error = ColorManagementTests.meanError(image, expected)
        #expect(error <= 2, "mean error \(error)")
        let formula = try Self.decode(ycck)
        #expect(try Self.decode(tagged, .ignore).pixels == formula.pixels)
        #expect(ColorManagementTests.meanError(formula, expected) > 4)
        let kept = try Self.decode(tagged, .keep)
        #expect(kept.colorProfile == nil && kept.sourceColorProfile == profile)
        #expect(kept.pixels == image.pixels)
    }

    /// `jpeg` with `icc` in APP2 markers of at most 65519 bytes each, right after SOI.
    static func withICC(_ jpeg: Data, _ icc: Data) -> Data {
        let parts = stride(from: 0, to: icc.count, by: 65_519).map { icc[$0..<min($0 + 65_519, icc.count)] }
        var markers = Data()
        for (index, part) in parts.enumerated() {
            let length = 2 + 14 + part.count
            markers += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Data("ICC_PROFILE".utf8)
            markers += [0, UInt8(index + 1), UInt8(parts.count)] + part
        }
        return jpeg.prefix(2) + markers + jpeg.dropFirst(2)
    }
}
