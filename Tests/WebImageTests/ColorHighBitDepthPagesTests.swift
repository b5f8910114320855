import Foundation
import Testing
@testable import WebImage

/// The high-precision conversion beyond one still: every page of a multi-page 16-bit TIFF and
/// every frame of a streamed 10-bit AVIF sequence (fixtures: `depth/` of
/// `scripts/fixtures/depth_frames.py`; the first page and frame are measured with the other
/// containers in `ColorHighBitDepthTests`).
@Suite("Colour at high bit depth: pages and frames", .cpuBound)
struct ColorHighBitDepthPagesTests {
    static let pages = "depth/prophoto-16bit-pages.tiff"
    static let sequence = "depth/prophoto-10bit-sequence.avif"

    /// Frame `index` of `image` as an image of its own.
    static func frame(_ image: Image, _ index: Int) -> Image {
        Image(format: image.format, pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight, pixels: image.frames[index].pixels, isOpaque: true)
    }

    /// `image` keeps at least as many levels as pyvips at 16 bits on `reference`, more red and
    /// green ones than Pillow's 8-bit read (the second page and frame are the ramp with its
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

    /// The streaming decoder of a 10-bit AVIF sequence converts each frame at 16 bits as it
    /// decodes it (not wrapped in the 8-bit per-frame conversion): its frames, in any order, are
    /// the full decode's, and the second one measures as the references do.
    @Test func aStreamedTenBitSequenceConvertsEachFrameBeforeNarrowing() throws {
        let data = try ColorManagementTests.load(Self.sequence)
        let whole = try ColorHighBitDepthTests.decode(Self.sequence)
        #expect(whole.frames.count == 2 && whole.sourceColorProfile?.description == "ProPhoto RGB")
        let animation = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data))
        #expect(animation is AVIFAnimationDecoder, "converted by the decoder itself, not frame by frame at 8 bits")
        #expect(animation.frameCount == 2)
        for index in [0, 1, 0, 1] {
            #expect(try animation.frame(at: index).pixels == whole.frames[index].pixels, "frame \(index)")
        }
        try Self.expectConvertedBeforeNarrowing(Self.frame(whole, 1), like: Self.sequence + ".f2")
        // The first frame is the 10-bit still's ramp.
        #expect(whole.frames[0].pixels == (try ColorHighBitDepthTests.decode("depth/prophoto-10bit-ramp.avif")).pixels)
        // Kept as stored, the stream is not converted at all.
        var keep = ImageDecodingOptions.default
        keep.colorHandling = .keep
        let kept = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data, options: keep))
        #expect(try kept.frame(at: 1).pixels != whole.frames[1].pixels)
    }

    /// Only the first page: the same first page, and the plan counts one frame.
    @Test func theFirstPageAloneIsTheSame() throws {
        let all = try ColorHighBitDepthTests.decode(Self.pages)
        let first = try ColorHighBitDepthTests.decode(Self.pages, ImageDecodingOptions(firstFrameOnly: true))
        #expect(first.frames.count <= 1)  // a still keeps no frame list
        #expect(first.pixels == all.frames[0].pixels)
        #expect(first.sourceColorProfile?.description == "ProPhoto RGB")
    }
}
