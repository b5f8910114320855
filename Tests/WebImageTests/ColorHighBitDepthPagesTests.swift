import Foundation
import Testing
@testable import WebImage

/// The high-precision conversion beyond one still: every page of a multi-page 16-bit TIFF
/// (fixtures: `depth/` of `scripts/fixtures/depth_frames.py`; the first page is measured with the
/// other containers in `ColorHighBitDepthTests`).
@Suite("Colour at high bit depth: pages", .cpuBound)
struct ColorHighBitDepthPagesTests {
    static let pages = "depth/prophoto-16bit-pages.tiff"

    /// Frame `index` of `image` as an image of its own.
    static func frame(_ image: Image, _ index: Int) -> Image {
        Image(format: image.format, pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight, pixels: image.frames[index].pixels, isOpaque: true)
    }

    /// `image` keeps at least as many levels as pyvips at 16 bits on `reference`, more red and
    /// green ones than Pillow's 8-bit read (the second page is the ramp with its
    /// channels turned: red falls, green rises), and is within 2 levels (mean) of both.
    static func expectConvertedBeforeNarrowing(_ image: Image, like reference: String) throws {
        let pillow = try ColorHighBitDepthTests.decode(reference + ".pillow.png")
        let precise = try ColorHighBitDepthTests.decode(reference + ".vips16.png")
        let ours = ColorHighBitDepthTests.levels(image), theirs = ColorHighBitDepthTests.levels(pillow)
        let best = ColorHighBitDepthTests.levels(precise)
        let message: Comment = "\(reference): distinct levels WebImage \(ours), Pillow \(theirs), pyvips 16-bit \(best)"
        #expect(zip(ours, best).allSatisfy { $0 >= $1 }, message)
        #expect(ours[0] > theirs[0] && ours[1] > theirs[1], message)
        #expect(ColorManagementTests.meanError(image, precise) <= 2, message)
        #expect(ColorManagementTests.meanError(image, pillow) <= 2, message)
    }

    @Test func theSecondPageConvertsBeforeNarrowing() throws {
        let image = try ColorHighBitDepthTests.decode(Self.pages)
        #expect(image.frameCount == 2 && image.frames.count == 2)
        #expect(image.sourceColorProfile?.description == "ProPhoto RGB")
        try Self.expectConvertedBeforeNarrowing(Self.frame(image, 1), like: Self.pages + ".p2")
        // The first page is the single-page TIFF's ramp, converted the same way.
        #expect(image.frames[0].pixels == (try ColorHighBitDepthTests.decode("depth/prophoto-16bit-ramp.tiff")).pixels)
    }

    /// Only the first page: the same first page, and the plan counts one frame.
    @Test func theFirstPageAloneIsTheSame() throws {
        let all = try ColorHighBitDepthTests.decode(Self.pages)
        let first = try ColorHighBitDepthTests.decode(Self.pages, ImageDecodingOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1 && first.pixels == all.frames[0].pixels)
        #expect(first.sourceColorProfile?.description == "ProPhoto RGB")
    }
}
