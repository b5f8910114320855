import Foundation
import Testing
@testable import WebImage

/// JPEG XL's choice between libjxl's 16-bit and 8-bit output: 16 bits (converted before
/// narrowing) only when the file has more than 8 bits a sample and its pixels are not stated as
/// sRGB (the ProPhoto ramps are measured with the other containers in `ColorHighBitDepthTests`),
/// given to libjxl in pieces as every JPEG XL decode is.
@Suite("Colour at high bit depth: JPEG XL", .cpuBound)
struct ColorHighBitDepthJXLTests {
    /// A 16-bit JPEG XL stated as sRGB converts nothing: its pixels are libjxl's 8-bit output,
    /// as with colour handling `ignore`; a profile it reports is sRGB, and none is kept.
    @Test func anSRGBJPEGXLOfSixteenBitsIsNotConverted() throws {
        let file = "depth/untagged-16bit-ramp.jxl"
        var ignore = ImageDecodingOptions.default
        ignore.colorHandling = .ignore
        let image = try ColorHighBitDepthTests.decode(file), ignored = try ColorHighBitDepthTests.decode(file, ignore)
        #expect(image.pixels == ignored.pixels)
        #expect(image.sourceColorProfile?.isSRGB ?? true, "\(String(describing: image.sourceColorProfile?.description))")
        #expect(image.colorProfile == nil)
        #expect(try JXLCoder.properties(try ColorManagementTests.load(file)).bitDepth == 16)
    }

    /// The deep ProPhoto file comes out of `JXLCoder` itself converted (the profile reported as
    /// the source, none kept), so `applyColor` leaves it; in pieces of any size it is the same
    /// image (`JXLPieceDecodeTests`). With `ignore` the decoder converts nothing.
    @Test func aDeepJPEGXLIsConvertedByTheDecoder() throws {
        let file = "depth/prophoto-16bit-ramp.jxl"
        let data = try ColorManagementTests.load(file)
        let decoded = try JXLCoder().decode(data, options: .default)
        #expect(decoded.sourceColorProfile?.description == "ProPhoto RGB" && decoded.colorProfile == nil)
        #expect(decoded.pixels == (try ColorHighBitDepthTests.decode(file)).pixels)
        var ignore = ImageDecodingOptions.default
        ignore.colorHandling = .ignore
        let stored = try JXLCoder().decode(data, options: ignore)
        #expect(stored.sourceColorProfile == nil && stored.pixels != decoded.pixels)
    }

    /// A lossy (XYB) JPEG XL stated as 8 bits, tagged ProPhoto: libjxl 0.7, which has no colour
    /// management for an ICC profile, hands it out in linear sRGB, so its 8-bit output is 8-bit
    /// linear light and bands (Pillow converting djxl's 8-bit output: 71, 6 and 7 levels where
    /// djxl's own float conversion to sRGB has 144, 39 and 43). Decoded at 16 bits and converted
    /// before narrowing, it keeps the ideal's levels and stays within a level of it.
    @Test func aLossyEightBitJPEGXLConvertsAtSixteenBits() throws {
        let file = "depth/prophoto-8bit-lossy-ramp.jxl"
        #expect(try JXLCoder.properties(try ColorManagementTests.load(file)).bitDepth == 8)
        let image = try ColorHighBitDepthTests.decode(file)
        let bar = try ColorHighBitDepthTests.decode(file + ".pillow.png")
        let ideal = try ColorHighBitDepthTests.decode(file + ".djxl-srgb.png")
        let ours = ColorHighBitDepthTests.levels(image), theirs = ColorHighBitDepthTests.levels(bar), best = ColorHighBitDepthTests.levels(ideal)
        let message: Comment = "distinct levels WebImage \(ours), Pillow after djxl's 8 bits \(theirs), djxl in floats \(best)"
        #expect(zip(ours, best).allSatisfy { $0 + 1 >= $1 }, message)
        #expect(zip(ours, theirs).allSatisfy { $0 > $1 }, message)
        #expect(image.sourceColorProfile != nil && image.colorProfile == nil)
        let error = ColorManagementTests.meanError(image, ideal)
        #expect(error <= 1, "mean error \(error) against djxl's conversion")
    }

}
