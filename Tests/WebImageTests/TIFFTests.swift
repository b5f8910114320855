import Foundation
import Testing
import WebImage

/// TIFF through libtiff against Pillow's decodes of the same files (scripts/fixtures/make-codec-fixtures.py).
@Suite("TIFF decoding")
struct TIFFTests {
    /// Lossless variants: at most 1 off per premultiplied channel (libtiff and our reference
    /// premultiply with the same rounding; CMYK conversion formulas differ by a rounding step).
    @Test(arguments: [
        ("tiff-rgb-lzw", 0), ("tiff-rgba-deflate", 1), ("tiff-palette-packbits", 0), ("tiff-cmyk", 1),
        ("tiff-tiled", 0), ("tiff-grey16", 0), ("tiff-rgb16", 0), ("tiff-zstd", 0), ("tiff-lzma", 0), ("tiff-planar", 0),
        ("tiff-bilevel-g4", 0), ("tiff-bigtiff", 0),
    ])
    func decodesLikePillow(_ name: String, _ tolerance: Int) throws {
        let data = try CodecFixtures.data("\(name).tif")
        #expect(ImageFormat(sniffing: data) == .tiff)
        let image = try ImageCoderRegistry.default.decode(data)
        let reference = try CodecFixtures.reference("\(name).ref.png")
        #expect(image.format == .tiff)
        #expect(image.pixelWidth == reference.pixelWidth && image.pixelHeight == reference.pixelHeight)
        #expect(maxDifference(image, reference) <= tolerance, "\(name)")
        #expect(image.isOpaque == reference.isOpaque)
    }

    @Test func jpegCompressedTIFFIsCloseToPillow() throws {
        let image = try TIFFCoder().decode(CodecFixtures.data("tiff-jpeg.tif"), options: .default)
        #expect(psnr(image, try CodecFixtures.reference("tiff-jpeg.ref.png")) > 40)
    }

    @Test func orientationTagIsReportedAndAppliedOnRequest() throws {
        let image = try TIFFCoder().decode(CodecFixtures.data("tiff-orientation6.tif"), options: .default)
        #expect(image.orientation == .right)
        #expect(image.pixelWidth == 40 && image.pixelHeight == 30)  // as stored
        let reference = try CodecFixtures.reference("tiff-orientation6.ref.png")  // Pillow applies the tag
        #expect(maxDifference(image.oriented(), reference) == 0)
    }

    @Test func pagesBecomeFrames() throws {
        let data = try CodecFixtures.data("tiff-multipage.tif")
        let header = try TIFFCoder().readHeader(data)
        #expect(header.frameCount == 3 && header.pixelWidth == 40 && header.pixelHeight == 30)
        let image = try TIFFCoder().decode(data, options: .default)
        #expect(image.frames.count == 3 && image.frameCount == 3)
        for index in 0..<3 {
            let reference = try CodecFixtures.reference("tiff-multipage.ref\(index).png")
            #expect(image.frame(at: index).pixels == reference.pixels, "page \(index)")
        }
        let first = try TIFFCoder().decode(data, options: .init(firstFrameOnly: true))
        #expect(first.frames.isEmpty && first.frameCount == 3)
        #expect(first.pixels == image.frames[0].pixels)
    }

    @Test func pixelLimitCountsEveryPage() throws {
        let data = try CodecFixtures.data("tiff-multipage.tif")
        // Three 40 × 30 pages are 3,600 pixels: 3,000 admits one page, not three.
        #expect(throws: ImageDecodingError.tooManyPixels(width: 40, height: 30, frames: 3, limit: 3_000)) {
            try TIFFCoder().decode(data, options: .init(maxPixelCount: 3_000))
        }
        #expect(try TIFFCoder().decode(data, options: .init(maxPixelCount: 3_000, firstFrameOnly: true)).pixelWidth == 40)
    }

    @Test func thumbnailsShrinkEveryPage() throws {
        let image = try TIFFCoder().decode(
            CodecFixtures.data("tiff-multipage.tif"), options: .init(thumbnailMaxPixelSize: 20))
        #expect(image.pixelWidth == 20 && image.pixelHeight == 15)
        #expect(image.frames.allSatisfy { $0.pixels.count == 20 * 15 * 4 })
    }

    @Test(arguments: [
        "tiff-rgb-lzw", "tiff-tiled", "tiff-multipage", "tiff-jpeg", "tiff-rgb16",
        // WebImage's own sample conversion (TIFFSampleTests): strips, Deflate tiles, separate planes, Lab.
        "tiff-grey12", "tiff-grey12-tiled", "tiff-int32", "tiff-float32", "tiff-cmyk16", "tiff-cmyk16-planar", "tiff-lab-picture",
    ])
    func truncatedOrDamagedFilesGiveTypedErrors(_ name: String) throws {
        let data = try CodecFixtures.data("\(name).tif")
        for length in [4, 8, 20, data.count / 3, data.count / 2, data.count - 40] {
            do {
                let image = try TIFFCoder().decode(data.prefix(length), options: .default)
                // libtiff may still read a file whose tail held nothing needed (a later page's tags).
                #expect(image.pixelWidth == 40)
            } catch {
                guard case .corrupt(.tiff, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(!reason.isEmpty)
            }
        }
        var damaged = data
        for offset in stride(from: 8, to: min(damaged.count, 400), by: 7) { damaged[offset] ^= 0x5A }
        do { _ = try TIFFCoder().decode(damaged, options: .default) } catch {
            if case .corrupt(.tiff, _) = error {} else if case .tooManyPixels = error {} else { Issue.record("\(error)") }
        }
    }
}
