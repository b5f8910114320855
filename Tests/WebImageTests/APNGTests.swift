import Foundation
import Testing
import WebImage

@Suite("APNG: sniffing, limits, options and lossless re-encoding")
struct APNGTests {
    static func fixture(_ name: String) throws -> Data { try CoderFixtureTests.data(name) }

    @Test func sniffsAnimatedPNGApartFromPNG() throws {
        let apng = try Self.fixture("apng-rgba8.apng")
        #expect(ImageFormat(sniffing: apng) == .apng)
        #expect(ImageFormat.apng.mimeType == "image/apng")
        #expect(ImageFormat(fileExtension: "apng") == .apng)
        let still = try PNGCoder().encode(try ImageCoderRegistry.default.decode(apng).frame(at: 1), as: .png, quality: 1)
        #expect(ImageFormat(sniffing: still) == .png)
        // Sniffing works from the first bytes alone, as a download in progress has them.
        #expect(ImageFormat(sniffing: apng.prefix(64)) == .apng)
    }

    @Test func headerGivesCanvasAndFrameCountWithoutDecoding() throws {
        let header = try ImageCoderRegistry.default.readHeader(try Self.fixture("apng-rgba8.apng"))
        #expect(header == ImageHeader(format: .apng, pixelWidth: 20, pixelHeight: 14, frameCount: 4, hasAlpha: true))
        let broken = try ImageCoderRegistry.default.readHeader(try Self.fixture("apng-broken-sequence.apng"))
        #expect(broken.format == .png && broken.frameCount == 1)
    }

    @Test func pixelLimitCountsEveryFrameBeforeDecoding() throws {
        let apng = try Self.fixture("apng-rgba8.apng")
        let all = 20 * 14 * 4
        #expect(throws: ImageDecodingError.tooManyPixels(width: 20, height: 14, frames: 4, limit: all - 1)) {
            try ImageCoderRegistry.default.decode(apng, options: ImageDecodingOptions(maxPixelCount: all - 1))
        }
        let first = try ImageCoderRegistry.default.decode(apng, options: ImageDecodingOptions(maxPixelCount: 20 * 14, firstFrameOnly: true))
        #expect(first.frames.isEmpty && first.frameCount == 4 && first.loopCount == 3)
        let animation = try ImageCoderRegistry.default.decode(apng)
        #expect(first.pixels == animation.frames[0].pixels)
    }

    @Test func lyingCanvasSizeIsRefusedBeforeAllocation() throws {
        var apng = [UInt8](try Self.fixture("apng-rgba8.apng"))
        // IHDR width and height 60 000 × 60 000: 3.6 G pixels a frame (IHDR's CRC is not re-made, the
        // animation walk refuses a bad CRC, so make it valid).
        apng.replaceSubrange(16..<24, with: [0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60])
        let crc = crc32(apng[12..<29])
        apng.replaceSubrange(29..<33, with: [UInt8(crc >> 24), UInt8(crc >> 16 & 255), UInt8(crc >> 8 & 255), UInt8(crc & 255)])
        #expect(throws: ImageDecodingError.self) { try ImageCoderRegistry.default.decode(Data(apng)) }
        do {
            _ = try ImageCoderRegistry.default.decode(Data(apng))
        } catch {
            guard case .tooManyPixels(60_000, 60_000, _, _) = error else {
                Issue.record("expected tooManyPixels, got \(error)")
                return
            }
        }
    }

    @Test func thumbnailShrinksEveryFrame() throws {
        let image = try ImageCoderRegistry.default.decode(
            try Self.fixture("apng-rgba8.apng"), options: ImageDecodingOptions(thumbnailMaxPixelSize: 10))
        #expect(image.pixelWidth == 10 && image.pixelHeight == 7)
        #expect(image.frames.count == 4 && image.frames.allSatisfy { $0.pixels.count == 10 * 7 * 4 })
    }

    @Test(arguments: [
        "apng-rgba8.apng", "apng-rgba8-translucent.apng", "apng-palette8-trns.apng", "apng-grey16.apng", "apng-rgb8.apng",
        "apng-apngasm.apng",
    ])
    func reencodesLosslessly(_ name: String) throws {
        let original = try ImageCoderRegistry.default.decode(try Self.fixture(name))
        let encoded = try ImageCoderRegistry.default.encode(original, as: .apng)
        #expect(ImageFormat(sniffing: encoded) == .apng)
        let again = try ImageCoderRegistry.default.decode(encoded)
        #expect(again.format == .apng && again.loopCount == original.loopCount)
        #expect(again.frames == original.frames)
    }

    @Test func gifAnimationBecomesAnAPNGWithTheSameFrames() throws {
        let gif = try ImageCoderRegistry.default.decode(try AnimationTests.disposalGIF(loop: 0))
        let apng = try ImageCoderRegistry.default.decode(try ImageCoderRegistry.default.encode(gif, as: .apng))
        #expect(apng.frames == gif.frames && apng.loopCount == 0 && apng.frameCount == 4)
    }

    @Test func longDelaysKeepTheirLength() throws {
        var image = try ImageCoderRegistry.default.decode(try Self.fixture("apng-rgba8.apng"))
        image.frames[1].duration = .seconds(70)
        image.frames[2].duration = .milliseconds(65_535)
        let again = try ImageCoderRegistry.default.decode(try ImageCoderRegistry.default.encode(image, as: .apng))
        #expect(again.frames[1].duration == .seconds(70) && again.frames[2].duration == .milliseconds(65_535))
    }

    private func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c = UInt32.max
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }
}
