import Foundation
import Testing
import WebImage

/// Colour-managed decoding against two independent implementations: every fixture written by
/// `scripts/fixtures/make-color-fixtures.py` (13 ICC profiles from Debian's `colord-data` and
/// `icc-profiles-free`, in JPEG, PNG, WebP and TIFF) decodes to within 2 levels (mean absolute
/// error per channel) of Pillow's ImageCms and of pyvips' `icc_transform` conversion to sRGB.
@Suite("Colour management", .cpuBound)
struct ColorManagementTests {
    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        let file: String
        let profile: String
        let mode: String
        let description: String
        var testDescription: String { file }
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/color")
    static let cases: [Case] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
              let cases = try? JSONDecoder().decode([Case].self, from: data) else { return [] }
        return cases
    }()

    static func load(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    /// The largest of the three channels' mean absolute errors, in 8-bit levels.
    static func meanError(_ a: Image, _ b: Image) -> Double {
        precondition(a.pixelWidth == b.pixelWidth && a.pixelHeight == b.pixelHeight)
        var sums = [0, 0, 0]
        for y in 0..<a.pixelHeight {
            for x in 0..<a.pixelWidth {
                let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
                sums[0] += abs(Int(p.r) - Int(q.r))
                sums[1] += abs(Int(p.g) - Int(q.g))
                sums[2] += abs(Int(p.b) - Int(q.b))
            }
        }
        return Double(sums.max()!) / Double(a.pixelWidth * a.pixelHeight)
    }

    @Test func fixturesArePresent() {
        #expect(Self.cases.count >= 40)
    }

    @Test(arguments: cases)
    func matchesPillowAndVips(_ fixture: Case) throws {
        let image = try ImageCoderRegistry.default.decode(try Self.load(fixture.file))
        let profile = try #require(image.sourceColorProfile, "no profile read from \(fixture.file)")
        #expect(profile.description == fixture.description)
        #expect(profile.colorSpace == (fixture.mode == "L" ? .gray : .rgb))
        #expect(image.colorProfile == nil, "converted pixels are sRGB")
        for reference in ["pillow", "vips"] {
            let expected = try ImageCoderRegistry.default.decode(try Self.load("\(fixture.file).\(reference).png"))
            let error = Self.meanError(image, expected)
            #expect(error <= 2, "\(fixture.file) against \(reference): mean error \(error)")
        }
    }

    /// Without conversion, wide-gamut pixels are visibly wrong: the test above measures something.
    @Test func ignoringTheProfileIsFarFromTheReference() throws {
        var options = ImageDecodingOptions.default
        options.colorHandling = .ignore
        let ignored = try ImageCoderRegistry.default.decode(try Self.load("prophoto.png"), options: options)
        let expected = try ImageCoderRegistry.default.decode(try Self.load("prophoto.png.pillow.png"))
        #expect(Self.meanError(ignored, expected) > 10)
        #expect(ignored.sourceColorProfile?.description == "ProPhoto RGB")
        #expect(ignored.colorProfile == nil)
    }

    @Test func swappedRedAndGreenComesOutGreen() throws {
        for format in ["jpg", "png", "webp", "tiff"] {
            let image = try ImageCoderRegistry.default.decode(try Self.load("swapped-red-green.\(format)"))
            let patch = image.pixel(x: 2, y: 2)  // stored as pure red
            #expect(patch.g > 200 && patch.r < 60, "\(format): \(patch)")
        }
    }

    @Test func keepLeavesPixelsAndCarriesTheProfile() throws {
        var keep = ImageDecodingOptions.default, ignore = ImageDecodingOptions.default
        keep.colorHandling = .keep
        ignore.colorHandling = .ignore
        let data = try Self.load("adobe-rgb.png")
        let kept = try ImageCoderRegistry.default.decode(data, options: keep)
        let untouched = try ImageCoderRegistry.default.decode(data, options: ignore)
        #expect(kept.pixels == untouched.pixels)
        #expect(kept.colorProfile?.description.contains("Adobe RGB (1998)") == true)
        #expect(kept.colorProfile == kept.sourceColorProfile)
    }

    @Test func sRGBProfilesAreRecognisedAndSkipped() throws {
        var ignore = ImageDecodingOptions.default
        ignore.colorHandling = .ignore
        let data = try Self.load("srgb-colord.png")
        let converted = try ImageCoderRegistry.default.decode(data)
        #expect(converted.sourceColorProfile?.isSRGB == true)
        #expect(converted.pixels == (try ImageCoderRegistry.default.decode(data, options: ignore)).pixels)
        let adobe = try #require(ColorProfile(iccData: try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/AdobeRGB1998.icc"))))
        #expect(!adobe.isSRGB)
    }

    /// A 16-bit ProPhoto ramp: WebImage converts at 16 bits before narrowing to 8 (the PNG decoder
    /// hands the RGBA16 pixels to a 16-bit transform), as pyvips does with `depth=16`; Pillow reads
    /// the file as 8-bit and then converts, merging steps (measured: Pillow 91/38/27 distinct levels
    /// per channel, pyvips at 16 bits 144/38/44). WebImage keeps every step pyvips keeps, at
    /// least as many as Pillow, and is within 2 levels of pyvips (mean; at most 1 anywhere).
    @Test func highBitDepthConvertsBeforeNarrowing() throws {
        let image = try ImageCoderRegistry.default.decode(try Self.load("depth/prophoto-16bit-ramp.png"))
        let pillow = try ImageCoderRegistry.default.decode(try Self.load("depth/prophoto-16bit-ramp.png.pillow.png"))
        let precise = try ImageCoderRegistry.default.decode(try Self.load("depth/prophoto-16bit-ramp.png.vips16.png"))
        func levels(_ image: Image) -> [Int] {
            (0..<3).map { channel in Set(stride(from: channel, to: image.pixels.count, by: 4).map { image.pixels[$0] }).count }
        }
        let ours = levels(image), theirs = levels(pillow), best = levels(precise)
        let message: Comment = "distinct levels: WebImage \(ours), Pillow \(theirs), pyvips 16-bit \(best)"
        #expect(zip(ours, theirs).allSatisfy { $0 >= $1 }, message)
        #expect(zip(ours, best).allSatisfy { $0 >= $1 }, message)
        #expect(image.sourceColorProfile?.description == "ProPhoto RGB")
        #expect(Self.meanError(image, precise) <= 2)
        #expect(zip(image.pixels, precise.pixels).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
    }

    /// The RGBA16 buffer counts against a decoded-bytes budget (12 bytes a pixel with the result):
    /// under a budget that only fits the 8-bit decode, the file converts after narrowing (Pillow's
    /// steps); a budget that fits both keeps pyvips' steps.
    @Test func highBitDepthRespectsTheDecodedBytesBudget() throws {
        let data = try Self.load("depth/prophoto-16bit-ramp.png")
        let pixels = 1024 * 8
        var tight = ImageDecodingOptions.default, roomy = ImageDecodingOptions.default
        tight.maxDecodedBytes = 8 * pixels
        roomy.maxDecodedBytes = 12 * pixels
        func redLevels(_ options: ImageDecodingOptions) throws -> Int {
            let image = try ImageCoderRegistry.default.decode(data, options: options)
            #expect(image.pixelWidth == 1024 && image.sourceColorProfile?.description == "ProPhoto RGB")
            return Set(stride(from: 0, to: image.pixels.count, by: 4).map { image.pixels[$0] }).count
        }
        let narrow = try redLevels(tight), wide = try redLevels(roomy)
        #expect(wide == 144 && narrow < wide, "red levels: \(narrow) under the tight budget, \(wide) under the roomy one")
    }

    /// `keep` and `ignore` leave a 16-bit file's pixels as stored (the 8-bit decode).
    @Test func highBitDepthKeepAndIgnoreDoNotConvert() throws {
        let data = try Self.load("depth/prophoto-16bit-ramp.png")
        var keep = ImageDecodingOptions.default, ignore = ImageDecodingOptions.default
        keep.colorHandling = .keep
        ignore.colorHandling = .ignore
        let kept = try ImageCoderRegistry.default.decode(data, options: keep)
        let ignored = try ImageCoderRegistry.default.decode(data, options: ignore)
        let converted = try ImageCoderRegistry.default.decode(data)
        #expect(kept.pixels == ignored.pixels && kept.colorProfile?.description == "ProPhoto RGB")
        #expect(ignored.colorProfile == nil && ignored.sourceColorProfile?.description == "ProPhoto RGB")
        #expect(converted.pixels != kept.pixels && converted.colorProfile == nil)
    }

    @Test func untaggedImagesHaveNoProfile() throws {
        let png = try ImageCoderRegistry.default.encode(Image(format: .png, pixelWidth: 2, pixelHeight: 2, pixels: Array([[UInt8]](repeating: [200, 200, 200, 255], count: 4).joined()), isOpaque: true), as: .png)
        let image = try ImageCoderRegistry.default.decode(png)
        #expect(image.sourceColorProfile == nil && image.colorProfile == nil && image.repairs.isEmpty)
    }
}
