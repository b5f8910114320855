import Foundation
import Testing
@testable import WebImage

/// Every container of more than 8 bits a sample converts its profile at 16 bits before narrowing
/// to 8 (``WideColorConversion``), measured on the ramps `scripts/fixtures/make-color-fixtures.py`
/// writes (`depth/`): a slow dark-to-mid ramp tagged ProPhoto (whose 1.8 curve and wide gamut make
/// an 8-bit conversion merge steps) as 16-bit TIFF, 10- and 12-bit AVIF (lossless) and HEIC (x265
/// lossless in RGB), 16- and 10-bit lossless JPEG XL, a two-page 16-bit TIFF and a two-frame
/// 10-bit AVIF sequence (their second page and frame: `ColorHighBitDepthPagesTests`), a 10-bit
/// HEIC with premultiplied alpha (references premultiplied at 8 bits, as WebImage holds pixels),
/// and a 16-bit grey ramp tagged with an L* grey profile, as PNG and as a 12-bit TIFF (a scanner's
/// layout, read by `TIFFSampleModel`). References: Pillow converting after its own
/// 8-bit decode (the bar) and pyvips `icc_transform(depth=16)` (the ideal).
@Suite("Colour at high bit depth", .cpuBound)
struct ColorHighBitDepthTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let file: String
        let profile: String
        var testDescription: String { file }
    }

    static let cases = [
        Case(file: "depth/prophoto-16bit-ramp.tiff", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-10bit-ramp.avif", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-12bit-ramp.avif", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-10bit-ramp.heic", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-12bit-ramp.heic", profile: "ProPhoto RGB"),
        Case(file: "depth/gray-16bit-ramp.png", profile: "Gray CIE*L"),
        Case(file: "depth/gray-12bit-ramp.tiff", profile: "Gray CIE*L"),
        Case(file: "depth/prophoto-16bit-ramp.jxl", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-10bit-ramp.jxl", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-16bit-pages.tiff", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-10bit-sequence.avif", profile: "ProPhoto RGB"),
        Case(file: "depth/prophoto-10bit-premultiplied.heic", profile: "ProPhoto RGB"),
    ]

    static func decode(_ name: String, _ options: ImageDecodingOptions = .default) throws -> Image {
        try ImageCoderRegistry.default.decode(try ColorManagementTests.load(name), options: options)
    }

    /// Distinct 8-bit levels per channel (R, G, B).
    static func levels(_ image: Image) -> [Int] {
        (0..<3).map { channel in Set(stride(from: channel, to: image.pixels.count, by: 4).map { image.pixels[$0] }).count }
    }

    /// At least as many distinct levels per channel as pyvips at 16 bits, which is at least as many
    /// as Pillow in every channel where Pillow's levels are steps (measured: red and blue, the
    /// monotone ramps, lose 30–50 and 15 levels in Pillow; green goes up and down across the
    /// ramp, and Pillow's rounding errors stretch its range by 1–2 levels past the exact one,
    /// which counts as more levels without being steps). Within 2 levels of pyvips (mean).
    @Test(arguments: cases)
    func convertsBeforeNarrowing(_ fixture: Case) throws {
        let image = try Self.decode(fixture.file)
        let pillow = try Self.decode(fixture.file + ".pillow.png")
        let precise = try Self.decode(fixture.file + ".vips16.png")
        let ours = Self.levels(image), theirs = Self.levels(pillow), best = Self.levels(precise)
        let message: Comment = "\(fixture.file): distinct levels WebImage \(ours), Pillow \(theirs), pyvips 16-bit \(best)"
        // Premultiplied output is rounded once more at 8 bits (alpha × value), which can merge
        // one level where pyvips' reference was premultiplied from its own rounding (measured:
        // red 109 against 110, Pillow 78).
        let slack = fixture.file.contains("premultiplied") ? 1 : 0
        #expect(zip(ours, best).allSatisfy { $0 + slack >= $1 }, message)
        #expect((0..<3).allSatisfy { ours[$0] >= theirs[$0] || theirs[$0] > best[$0] }, message)
        #expect(ours[0] > theirs[0], message)  // the red (or grey) ramp: where the 8-bit conversion bands
        #expect(image.sourceColorProfile?.description == fixture.profile)
        #expect(image.colorProfile == nil)
        let error = ColorManagementTests.meanError(image, precise)
        #expect(error <= 2, "\(fixture.file): mean error \(error) against pyvips")
        #expect(ColorManagementTests.meanError(image, pillow) <= 2, "\(fixture.file) against Pillow")
    }

    /// The RGBA16 buffer counts against a decoded-bytes budget (8 bytes a pixel beside 4 for each
    /// RGBA8 frame or page):
    /// a budget that fits only the 8-bit decode converts after narrowing (fewer levels, the same
    /// size and profile), one that fits both converts at 16 bits.
    @Test(arguments: cases)
    func respectsTheDecodedBytesBudget(_ fixture: Case) throws {
        let pixels = 1024 * 8, frames = fixture.file.contains("pages") || fixture.file.contains("sequence") ? 2 : 1
        var tight = ImageDecodingOptions.default, roomy = ImageDecodingOptions.default
        tight.maxDecodedBytes = (4 + 4 * frames) * pixels
        roomy.maxDecodedBytes = (8 + 4 * frames) * pixels
        let narrow = try Self.decode(fixture.file, tight), wide = try Self.decode(fixture.file, roomy)
        #expect(narrow.pixelWidth == 1024 && wide.pixelWidth == 1024)
        #expect(narrow.sourceColorProfile?.description == fixture.profile && wide.sourceColorProfile?.description == fixture.profile)
        let narrowLevels = Self.levels(narrow)[0], wideLevels = Self.levels(wide)[0]
        #expect(narrowLevels < wideLevels, "\(fixture.file): red levels \(narrowLevels) under the tight budget, \(wideLevels) under the roomy one")
        #expect(wide.pixels == (try Self.decode(fixture.file)).pixels)
    }

    /// `keep` and `ignore` leave the pixels as stored (the 8-bit decode), with the profile kept
    /// or only reported.
    @Test(arguments: cases)
    func keepAndIgnoreDoNotConvert(_ fixture: Case) throws {
        var keep = ImageDecodingOptions.default, ignore = ImageDecodingOptions.default
        keep.colorHandling = .keep
        ignore.colorHandling = .ignore
        let kept = try Self.decode(fixture.file, keep), ignored = try Self.decode(fixture.file, ignore)
        #expect(kept.pixels == ignored.pixels && kept.colorProfile?.description == fixture.profile)
        #expect(ignored.colorProfile == nil && ignored.sourceColorProfile?.description == fixture.profile)
        #expect(kept.pixels != (try Self.decode(fixture.file)).pixels)
    }

    /// Sides, depth and frame count come from the file: the plan refuses what it cannot afford
    /// (and never traps on the arithmetic), so those files take the 8-bit path.
    @Test func planRefusesWhatItCannotAfford() throws {
        let data = try ColorManagementTests.load("depth/prophoto-16bit-ramp.png")
        var budget = ImageDecodingOptions.default
        budget.maxDecodedBytes = .max
        var calls = 0
        func plan(_ width: Int, _ height: Int, frames: Int = 1, bits: Int = 16, _ options: ImageDecodingOptions = .default) -> Bool {
            WideColorConversion.planned(width: width, height: height, frames: frames, bitDepth: bits, options: options) {
                calls += 1
                return EmbeddedColor.read(from: data, format: .png)
            } != nil
        }
        #expect(plan(1024, 8))
        #expect(plan(4096, 4096, budget))
        #expect(!plan(4097, 4096))  // over 16 MP
        #expect(!plan(.max, .max, budget) && !plan(.max, 2) && !plan(-1, 8) && !plan(0, 8) && !plan(1 << 40, 1 << 40))
        #expect(!plan(1024, 8, frames: .max, budget) && !plan(1024, 8, frames: .max / 4, budget) && !plan(1024, 8, frames: 0))
        #expect(!plan(1024, 8, bits: 8) && !plan(1024, 8, bits: -1) && !plan(1024, 8, bits: .min))
        var small = ImageDecodingOptions.default
        small.maxDecodedBytes = 12 * 1024 * 8 - 1
        #expect(!plan(1024, 8, small))
        small.maxDecodedBytes = .min
        #expect(!plan(1024, 8, small))
        #expect(calls == 2, "the profile is read only when everything else allows")
        let untagged = WideColorConversion.planned(width: 8, height: 8, bitDepth: 16, options: .default) { .untagged }
        #expect(untagged == nil)
    }
}
