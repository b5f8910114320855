import Foundation
import Testing
import WebImage

/// TIFF pages libtiff's RGBA interface refuses (12-bit, 32-bit integer and float grey, 16-bit CMYK)
/// and CIE L*a*b*, which WebImage converts from libtiff's raw strips and tiles itself, against
/// Pillow's decodes of the same samples scaled by the documented rules
/// (scripts/fixtures/make-codec-fixtures.py, `sample_fixtures`). Truncated and damaged copies of these files
/// are in `TIFFTests.truncatedOrDamagedFilesGiveTypedErrors`.
@Suite("TIFF sample conversion")
struct TIFFSampleTests {
    /// 12-bit at full range (strips; Deflate tiles), 32-bit integers on a 16-bit scale, floats on
    /// 0–255, 16-bit CMYK (contiguous; separate planes): Pillow's CMYK reference keeps 8 of the 16
    /// bits, so 1 level apart at most.
    @Test(arguments: [
        ("tiff-grey12", 0), ("tiff-grey12-tiled", 0), ("tiff-int32", 0), ("tiff-float32", 1), ("tiff-cmyk16", 1),
        ("tiff-cmyk16-planar", 1),
    ])
    func convertsSamplesLibtiffsRGBAInterfaceRefuses(_ name: String, _ tolerance: Int) throws {
        let image = try TIFFCoder().decode(CodecFixtures.data("\(name).tif"), options: .default)
        let reference = try CodecFixtures.reference("\(name).ref.png")
        #expect(image.pixelWidth == 40 && image.pixelHeight == 30)
        #expect(maxDifference(image, reference) <= tolerance, "\(name): \(maxDifference(image, reference))")
        #expect(image.isOpaque && image.repairs.isEmpty)
    }

    /// CIE L*a*b* against Pillow's LittleCMS conversion (D50 Lab → sRGB): patches, and a picture.
    /// LittleCMS interpolates its 8-bit Lab transform through a grid, which strays near the gamut's
    /// edge (green 5–9 where the formula clips to 0): a mean bound, and a loose largest difference.
    @Test(arguments: [("tiff-lab", 3), ("tiff-lab-picture", 30)])
    func labMatchesAColourManagedConversion(_ name: String, _ largest: Int) throws {
        let image = try TIFFCoder().decode(CodecFixtures.data("\(name).tif"), options: .default)
        let reference = try CodecFixtures.reference("\(name).ref.png")
        #expect(maxDifference(image, reference) <= largest, "\(name): \(maxDifference(image, reference))")
        #expect(meanDifference(image, reference) <= 1.0, "\(name): \(meanDifference(image, reference))")
        if name == "tiff-lab" { #expect(Array(image.pixels[0..<4]) == [255, 255, 255, 255]) }  // white stays white
    }

    @Test func labPictureComesBackCloseToTheSRGBItWasMadeFrom() throws {
        // tiff-lab-picture.tif is tiff-rgb-lzw.tif's picture through LittleCMS's sRGB → Lab (8-bit
        // Lab: a* and b* in whole steps, so a few levels are lost in the round trip).
        let image = try TIFFCoder().decode(CodecFixtures.data("tiff-lab-picture.tif"), options: .default)
        let source = try CodecFixtures.reference("tiff-rgb-lzw.ref.png")
        #expect(maxDifference(image, source) <= 12, "\(maxDifference(image, source))")
        #expect(meanDifference(image, source) <= 1.0)
    }

    @Test func pixelLimitIsCheckedBeforeReadingSamples() throws {
        let data = try CodecFixtures.data("tiff-grey12.tif")
        #expect(throws: ImageDecodingError.tooManyPixels(width: 40, height: 30, frames: 1, limit: 1_000)) {
            try TIFFCoder().decode(data, options: .init(maxPixelCount: 1_000))
        }
    }

    private func meanDifference(_ a: Image, _ b: Image) -> Double {
        Double(zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(max(a.pixels.count, 1))
    }
}
