import Foundation
import Testing
import WebImage

/// Files that break their format's rules as real-world files do (scripts/fixtures/make-leniency-fixtures.py):
/// decoded leniently, with ``Image/repairs`` saying what was forgiven, and refused in strict mode.
@Suite("Lenient and strict decoding")
struct LeniencyTests {
    static let strict = ImageDecodingOptions(strict: true)

    static func decode(_ file: String, _ options: ImageDecodingOptions = .default) throws -> Image {
        try ImageCoderRegistry.default.decode(CodecFixtures.data(file), options: options)
    }

    static func expectRefusedInStrictMode(_ file: String, _ repair: ImageRepairs) {
        do {
            _ = try decode(file, strict)
            Issue.record("\(file) decoded in strict mode")
        } catch {
            guard case .refusedInStrictMode(_, let repairs, let reason) = error as? ImageDecodingError else {
                Issue.record("\(file): \(error)"); return
            }
            #expect(repairs.contains(repair), "\(file): \(repairs.names)")
            #expect(!reason.isEmpty)
        }
    }

    /// Files whose lenient decode equals the clean file's, pixel for pixel.
    @Test(arguments: [
        ("lenient-jpeg-junk.jpg", "lenient-jpeg-clean.jpg", ImageRepairs.junkBytes),
        ("lenient-jpeg-stuffed-ff00.jpg", "lenient-jpeg-clean.jpg", .junkBytes),
        ("lenient-jpeg-short-adobe.jpg", "lenient-jpeg-clean.jpg", .damagedMetadata),
        ("lenient-jpeg-broken-exif.jpg", "lenient-jpeg-clean.jpg", .damagedMetadata),
        ("lenient-jpeg-zero-density.jpg", "lenient-jpeg-clean.jpg", .damagedMetadata),
        ("lenient-gif-no-trailer.gif", "lenient-gif-clean.gif", .missingTrailer),
        ("lenient-gif-transparent-beyond.gif", "lenient-gif-clean.gif", .paletteMismatch),
        ("lenient-gif-zero-screen.gif", "lenient-gif-clean.gif", .canvasMismatch),
        ("lenient-gif-wide-codes.gif", "lenient-gif-clean.gif", .codingBeyondSpec),
        ("lenient-png-bad-text-crc.png", "lenient-png-clean.png", .damagedMetadata),
        ("lenient-png-grey-trns-wide.png", "lenient-png-grey-trns-clean.png", .damagedMetadata),
        ("lenient-ico-short-entry-size.ico", "lenient-ico-clean.ico", .damagedMetadata),
        ("lenient-bmp-offset-at-palette.bmp", "lenient-bmp-clean.bmp", .damagedMetadata),
        ("lenient-avif-no-pixi.avif", "lenient-avif-clean.avif", .damagedMetadata),
    ])
    func forgivenLikeBrowsersAndRefusedWhenStrict(_ file: String, _ clean: String, _ repair: ImageRepairs) throws {
        let image = try Self.decode(file)
        let reference = try Self.decode(clean)
        #expect(reference.repairs.isEmpty && !reference.isLenient)
        #expect(image.pixels == reference.pixels && image.frames == reference.frames, "\(file)")
        #expect(image.repairs.contains(repair) && image.isLenient && !image.isPartial, "\(file): \(image.repairs.names)")
        Self.expectRefusedInStrictMode(file, repair)
        #expect(try Self.decode(clean, Self.strict).pixels == reference.pixels)
    }

    @Test func legalOddities() throws {
        // Fill bytes before a marker and local palettes without a global one are valid files.
        let clean = try Self.decode("lenient-jpeg-clean.jpg")
        for options in [ImageDecodingOptions.default, Self.strict] {
            let filled = try Self.decode("lenient-jpeg-fill-bytes.jpg", options)
            #expect(filled.pixels == clean.pixels && filled.repairs.isEmpty)
            let local = try Self.decode("lenient-gif-local-palettes.gif", options)
            #expect(local.frames == (try Self.decode("lenient-gif-clean.gif")).frames && local.repairs.isEmpty)
        }
    }

    @Test func truncatedJPEGIsPartialWithItsTopRows() throws {
        let image = try Self.decode("lenient-jpeg-truncated.jpg")
        #expect(image.isPartial && image.repairs.contains(.truncated))
        let clean = try Self.decode("lenient-jpeg-clean.jpg")
        #expect(image.pixelWidth == clean.pixelWidth && image.pixelHeight == clean.pixelHeight)
        let top = 8 * clean.bytesPerRow
        #expect(image.pixels[..<top] == clean.pixels[..<top])
        Self.expectRefusedInStrictMode("lenient-jpeg-truncated.jpg", .truncated)
    }

    @Test func truncatedPNGKeepsDecodedRowsAndLeavesTheRestTransparent() throws {
        let image = try Self.decode("lenient-png-truncated.png")
        #expect(image.isPartial && !image.isOpaque)
        let clean = try Self.decode("lenient-png-clean.png")
        let top = 4 * clean.bytesPerRow
        #expect(image.pixels[..<top] == clean.pixels[..<top])
        #expect(image.pixels.suffix(clean.bytesPerRow).allSatisfy { $0 == 0 })
        Self.expectRefusedInStrictMode("lenient-png-truncated.png", .truncated)
    }

    @Test func gifFrameOutsideTheScreenIsClipped() throws {
        let image = try Self.decode("lenient-gif-outside.gif")
        let clean = try Self.decode("lenient-gif-clean.gif")
        #expect(image.pixelWidth == 40 && image.pixelHeight == 30)
        #expect(image.repairs.contains(.canvasMismatch))
        // The first frame moved 25 px right: its left 15 columns show at x = 25 ..< 40.
        let first = image.frames[0].pixels, original = clean.frames[0].pixels
        for y in 0..<30 {
            #expect(first[(y * 40 + 25) * 4..<(y * 40 + 40) * 4] == original[(y * 40) * 4..<(y * 40 + 15) * 4])
            #expect(first[(y * 40) * 4..<(y * 40 + 25) * 4].allSatisfy { $0 == 0 })
        }
        Self.expectRefusedInStrictMode("lenient-gif-outside.gif", .canvasMismatch)
    }

    @Test func gifBadLZWKeepsTheFramesBefore() throws {
        let image = try Self.decode("lenient-gif-bad-lzw.gif")
        let clean = try Self.decode("lenient-gif-clean.gif")
        #expect(image.repairs.contains(.damagedData))
        #expect(image.frames.count == 2 && image.frames[0] == clean.frames[0])
        Self.expectRefusedInStrictMode("lenient-gif-bad-lzw.gif", .damagedData)
    }

    @Test func gifWideCodesCutOrDamagedKeepTheRowsDecoded() throws {
        // LZW minimum code size 11 (GIFLZWDecoder): cut inside the frame, and a code beyond the table.
        let clean = try Self.decode("lenient-gif-clean.gif")
        for (file, repair) in [("lenient-gif-wide-codes-truncated.gif", ImageRepairs.truncated), ("lenient-gif-wide-codes-bad-code.gif", .damagedData)] {
            let image = try Self.decode(file)
            #expect(image.repairs.contains(repair) && image.repairs.contains(.codingBeyondSpec), "\(file): \(image.repairs.names)")
            #expect(image.pixelWidth == 40 && image.pixelHeight == 30)
            // The first rows decoded before the break equal the clean file's.
            #expect(image.pixels.prefix(40 * 4) == clean.pixels.prefix(40 * 4), "\(file)")
            Self.expectRefusedInStrictMode(file, .codingBeyondSpec)
            let animation = try GIFAnimationDecoder(CodecFixtures.data(file))
            #expect(animation.repairs.contains(.codingBeyondSpec))
        }
        let animation = try GIFAnimationDecoder(CodecFixtures.data("lenient-gif-wide-codes.gif"))
        #expect(try animation.frame(at: 1) == clean.frames[1] && animation.frame(at: 0) == clean.frames[0])
    }

    @Test func tiffPageLibtiffCannotDecodeKeepsThePagesBefore() throws {
        // Page 2 holds 32-bit float RGB samples (neither libtiff's RGBA interface nor WebImage's
        // own conversion reads them); page 1 is the picture of tiff-rgb-lzw.tif.
        let image = try Self.decode("tiff-float-second-page.tif")
        #expect(image.frameCount == 2 && image.repairs == .damagedData)
        #expect(image.pixels == (try Self.decode("tiff-rgb-lzw.tif")).pixels)
        Self.expectRefusedInStrictMode("tiff-float-second-page.tif", .damagedData)
    }

    @Test func gifWithoutAnyPaletteDrawsBlack() throws {
        let image = try Self.decode("lenient-gif-no-palette.gif")
        #expect(image.repairs.contains(.paletteMismatch) && image.isOpaque)
        #expect(image.frames[0].pixels.enumerated().allSatisfy { $0.offset % 4 == 3 ? $0.element == 255 : $0.element == 0 })
        Self.expectRefusedInStrictMode("lenient-gif-no-palette.gif", .paletteMismatch)
    }

    @Test func thumbnailsAndFirstFramesKeepTheRepairs() throws {
        let thumbnail = try Self.decode("lenient-jpeg-junk.jpg", .init(thumbnailMaxPixelSize: 10))
        #expect(thumbnail.pixelWidth == 10 && thumbnail.repairs == .junkBytes)
        let first = try Self.decode("lenient-gif-outside.gif", .init(firstFrameOnly: true))
        #expect(first.frames.isEmpty && first.repairs.contains(.canvasMismatch))
        let partial = try Self.decode("lenient-png-truncated.png", .init(thumbnailMaxPixelSize: 20))
        #expect(partial.pixelWidth == 20 && partial.isPartial)
    }

    @Test func repairNamesAreStable() {
        #expect(ImageRepairs([.truncated, .junkBytes, .missingTrailer]).names == ["truncated", "junk-bytes", "missing-trailer"])
        #expect(ImageDecodingError.refusedInStrictMode(format: .png, repairs: .truncated, reason: "x").description
            == "png data refused in strict mode (truncated): x")
    }
}
