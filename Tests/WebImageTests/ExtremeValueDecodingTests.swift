import Foundation
import Testing
import WebImage

extension HeavyTests {
/// Every format's fields at their type's limits (longest delays, most frames or entries, largest
/// sizes, offsets and counts) through the real decoders, their headers, properties and
/// frame-by-frame decoders: a value or a typed error, never a trap
/// (docs/architecture/untrusted-arithmetic.md).
@Suite("Extreme field values through every decoder")
struct ExtremeValueDecodingTests {
    /// Decodes `data` every way the library can; what it gives (a value or an error) is for the caller to check.
    @discardableResult
    static func everyPath(_ data: Data) -> Result<Image, ImageDecodingError> {
        _ = try? ImageCoderRegistry.default.readHeader(data)
        _ = try? ImageProperties.read(from: data)
        _ = try? ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 8))
        _ = try? ImageCoderRegistry.default.decode(data, options: .init(strict: true))
        if let animation = try? ImageCoderRegistry.default.animatedDecoder(for: data) {
            for index in 0..<animation.frameCount {
                _ = animation.duration(at: index)
                _ = try? animation.frame(at: index)
            }
        }
        return Result { () throws(ImageDecodingError) in try ImageCoderRegistry.default.decode(data) }
    }

    @Test func webpLongestDelaysAndLoopCount() throws {
        let image = try Self.everyPath(ExtremeWebP.longAnimation(frames: 300, loopCount: .max)).get()
        #expect(image.frames.count == 300 && image.loopCount == 65_535)
        #expect(image.totalDuration == .milliseconds(300 * ExtremeWebP.longestDelay))
        #expect(try ImageProperties.read(from: ExtremeWebP.longAnimation(loopCount: .max)).loopCount == 65_535)
    }

    @Test func webpLargestCanvasIsRefused() throws {
        let data = try WebPBomb.header(width: 1 << 24, height: 1 << 24)
        guard case .failure(.tooManyPixels) = Self.everyPath(data) else { Issue.record("a 2²⁴ × 2²⁴ canvas decoded"); return }
    }

    @Test func gifLongestDelaysLoopCountAndFrameRectangles() throws {
        let gif = ExtremeGIF.longAnimation(frames: 3_400, loopCount: .max)
        let image = try Self.everyPath(gif).get()
        #expect(image.frames.count == 3_400 && image.loopCount == 65_535)
        #expect(image.totalDuration == .milliseconds(3_400 * 655_350))
        let animation = try #require(try ImageCoderRegistry.default.animatedDecoder(for: gif))
        #expect(animation.duration(at: 3_399) == .milliseconds(655_350))
        // A 65535 × 65535 frame at (65535, 65535) on a 1 × 1 screen: refused by its declared area.
        var far = Data("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]
        far += [0x2C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
        guard case .failure(.tooManyPixels) = Self.everyPath(far) else { Issue.record("a 65535² frame decoded"); return }
    }

    @Test func apngLongestDelaysCountsAndOffsets() throws {
        // 65535/1 s a frame, 2³² − 1 plays.
        let long = try Self.everyPath(ExtremePNG.apng(frames: 3, plays: .max, delay: (.max, 1))).get()
        #expect(long.format == .apng && long.frames.count == 3 && long.loopCount == Int(UInt32.max))
        #expect(long.frames.allSatisfy { $0.duration == .seconds(65_535) })
        // A denominator of 0 counts in 1/100 s.
        let hundredths = try Self.everyPath(ExtremePNG.apng(frames: 2, plays: 0, delay: (.max, 0))).get()
        #expect(hundredths.frames.allSatisfy { $0.duration == .milliseconds(655_350) })
        // 2³² − 1 frames declared, 2 present; a region at offset 2³² − 1: the still image shows.
        for broken in [ExtremePNG.apng(frames: 2, declared: .max, plays: 0, delay: (1, 1)),
                       ExtremePNG.apng(frames: 2, plays: 0, delay: (1, 1), region: (.max, .max, .max, .max))] {
            let still = try Self.everyPath(broken).get()
            #expect(still.format == .png && still.frames.isEmpty)
        }
    }

    @Test func pngLargestSizeAndChunkLengths() {
        let huge = Data(ExtremePNG.signature + ExtremePNG.ihdr(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF) + ExtremePNG.pixelData)
        guard case .failure = Self.everyPath(huge) else { Issue.record("a 2³¹ − 1 square PNG decoded"); return }
        // A chunk claiming 2³² − 1 bytes, an eXIf whose IFD offset and entry count are at their limits.
        let exif: [UInt8] = [0x49, 0x49, 42, 0, 0xFF, 0xFF, 0xFF, 0xFF] + [0xFF, 0xFF]
        let lying = Data(ExtremePNG.signature + ExtremePNG.ihdr(width: 1, height: 1) + ExtremePNG.chunk("eXIf", exif)
            + ExtremePNG.chunk("tEXt", [65, 0, 66], length: .max) + ExtremePNG.pixelData + ExtremePNG.chunk("IEND", []))
        Self.everyPath(lying)
        #expect(EXIFOrientation.read(fromPNG: lying) == .up)
    }

    @Test func jpegLargestSizeAndSegmentLengths() {
        // SOF0 of 65535 × 65535, an APP1 EXIF whose IFD offset is 2³² − 1, a segment of length 0xFFFF.
        let exif: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0, 42, 0xFF, 0xFF, 0xFF, 0xFF]
        var jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0, UInt8(exif.count + 2)] + exif
        jpeg += [0xFF, 0xC0, 0, 11, 8, 0xFF, 0xFF, 0xFF, 0xFF, 1, 1, 0x11, 0]
        jpeg += [0xFF, 0xFE, 0xFF, 0xFF, 0, 0]
        guard case .failure = Self.everyPath(Data(jpeg)) else { Issue.record("a 65535² JPEG decoded"); return }
        #expect(EXIFOrientation.read(fromJPEG: Data(jpeg)) == .up)
        #expect(JPEGMarkerScan.repairs(in: Data(jpeg)).contains(.truncated))
    }

    @Test func tiffLargestSizesOffsetsAndPageCounts() throws {
        // 2³² − 1 on each side; strips at offset 2³² − 1; 2³² − 1 rows per strip; 65535 samples of 65535 bits.
        let lies: [[(UInt16, UInt16, UInt32, UInt32)]] = [
            [(256, 4, 1, .max), (257, 4, 1, .max)],
            [(273, 4, 1, .max), (279, 4, 1, .max)],
            [(278, 4, 1, .max)],
            [(277, 3, 1, 0xFFFF), (258, 3, 1, 0xFFFF)],
            [(256, 4, 1, .max), (257, 4, 1, 1), (322, 4, 1, .max), (323, 4, 1, .max)],  // one tile of 2³² − 1 square
        ]
        for overrides in lies { Self.everyPath(ExtremeTIFF.file(pages: [ExtremeTIFF.page(overrides)])) }
        guard case .failure = Self.everyPath(ExtremeTIFF.file(pages: [ExtremeTIFF.page(lies[0])])) else {
            Issue.record("a 2³² − 1 square TIFF decoded"); return
        }
        // More pages than TIFFCoder reads: refused with a typed error, not walked forever.
        let many = ExtremeTIFF.file(pages: Array(repeating: ExtremeTIFF.page(), count: TIFFCoder.maxPages + 1))
        guard case .failure(.corrupt) = Self.everyPath(many) else { Issue.record("\(TIFFCoder.maxPages + 1) pages decoded"); return }
        #expect(try ImageCoderRegistry.default.decode(ExtremeTIFF.file(pages: [ExtremeTIFF.page()])).pixelWidth == 1)
    }

    @Test func bmpExtremeSizesOffsetsAndMasks() {
        let cases: [Data] = [
            ExtremeBMP.bmp(ExtremeBMP.dib(width: .max, height: .max)),
            ExtremeBMP.bmp(ExtremeBMP.dib(width: .max, height: .min)),
            ExtremeBMP.bmp(ExtremeBMP.dib(width: 1, height: .min + 1)),
            ExtremeBMP.bmp(pixelOffset: .max, ExtremeBMP.dib(width: 1, height: 1)),
            ExtremeBMP.bmp(ExtremeBMP.dib(width: 1, height: 1, bitCount: 8, colorsUsed: .max)),
            ExtremeBMP.bmp(ExtremeBMP.dib(width: 1, height: 1, compression: 3, tail: [UInt8](repeating: 0xFF, count: 16))),
            ExtremeBMP.bmp(ExtremeBMP.dib(width: 1, height: 1, bitCount: 8, compression: 1, tail: [0, 2, 0xFF, 0xFF, 0, 1])),
        ]
        for data in cases { Self.everyPath(data) }
        guard case .failure(.tooManyPixels) = Self.everyPath(cases[0]) else { Issue.record("2³¹ − 1 square BMP"); return }
        // Every alpha byte set by a full mask: decodes to the one pixel.
        #expect((try? Self.everyPath(cases[5]).get())?.pixelWidth == 1)
    }

    @Test func icoDirectoriesOfMostEntriesAndFarOffsets() throws {
        let bitmap = ExtremeBMP.dib(width: 1, height: 2, tail: [10, 20, 30, 255, 0, 0, 0, 0])
        let directory = 6 + 65_535 * 16
        // 65535 entries, all the same 1 × 1 bitmap: decodes.
        let many = ExtremeBMP.ico(count: 65_535, entry: { _ in (UInt32(bitmap.count), UInt32(directory)) }, images: bitmap)
        #expect(try Self.everyPath(many).get().pixelWidth == 1)
        // Entries past the end, of size 2³² − 1, and one whose bitmap claims 2³¹ − 1 pixels a side.
        let far = ExtremeBMP.ico(count: 65_535, entry: { _ in (.max, .max) })
        guard case .failure(.corrupt) = Self.everyPath(far) else { Issue.record("entries past the end decoded"); return }
        let huge = ExtremeBMP.ico(count: 1, entry: { _ in (.max, 22) }, images: ExtremeBMP.dib(width: .max, height: .max - 1))
        guard case .failure(.tooManyPixels) = Self.everyPath(huge) else { Issue.record("a 2³¹ − 1 square icon decoded"); return }
    }

    @Test func avifHeifAndJXLFixturesWithEveryByteAtItsLimit() throws {
        // No builder for these containers: each fixture's 32-bit fields are set to 0xFFFFFFFF one
        // at a time (box sizes, ispe sizes, timescales, durations, offsets), through every path.
        for name in ["lenient-avif-clean.avif", "jxl-animated.jxl"] {
            let original = try CodecFixtures.data(name)
            for at in stride(from: 0, to: min(original.count - 4, 1_024), by: 4) {
                var patched = original
                patched.replaceSubrange(at..<(at + 4), with: [0xFF, 0xFF, 0xFF, 0xFF])
                Self.everyPath(patched)
            }
        }
    }
}
}
