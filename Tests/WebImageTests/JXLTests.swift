import Foundation
import Testing
import WebImage

/// JPEG XL through libjxl against djxl's decodes and the GIF an animation was made from
/// (scripts/fixtures/make-codec-fixtures.py).
@Suite("JPEG XL decoding")
struct JXLTests {
    @Test(arguments: [("jxl-lossless", 0), ("jxl-alpha", 0), ("jxl-container", 0)])
    func losslessFilesDecodeExactlyLikeDjxl(_ name: String, _ tolerance: Int) throws {
        let data = try CodecFixtures.data("\(name).jxl")
        #expect(ImageFormat(sniffing: data) == .jpegXL)
        let image = try ImageCoderRegistry.default.decode(data)
        let reference = try CodecFixtures.reference("\(name).ref.png")
        #expect(image.format == .jpegXL && image.frameCount == 1 && image.frames.isEmpty)
        #expect(image.pixelWidth == reference.pixelWidth && image.pixelHeight == reference.pixelHeight)
        #expect(maxDifference(image, reference) <= tolerance)
        #expect(image.isOpaque == reference.isOpaque)
    }

    @Test func bothSignaturesAreSniffed() throws {
        #expect(try CodecFixtures.data("jxl-lossless.jxl").prefix(2) == Data([0xFF, 0x0A]))
        #expect(try CodecFixtures.data("jxl-container.jxl").prefix(4) == Data([0, 0, 0, 0x0C]))
        #expect(ImageFormat(sniffing: try CodecFixtures.data("jxl-container.jxl")) == .jpegXL)
    }

    @Test func lossyFileIsCloseToDjxl() throws {
        let image = try JXLCoder().decode(CodecFixtures.data("jxl-lossy.jxl"), options: .default)
        #expect(psnr(image, try CodecFixtures.reference("jxl-lossy.ref.png")) > 45)
    }

    /// Frames compared with djxl's own decode of the file.
    @Test func animationKeepsFramesDelaysAndLoopCount() throws {
        let data = try CodecFixtures.data("jxl-animated.jxl")
        let header = try JXLCoder().readHeader(data)
        #expect(header.frameCount == 3 && header.pixelWidth == 40 && header.pixelHeight == 30)
        let image = try JXLCoder().decode(data, options: .default)
        #expect(image.frames.count == 3 && image.loopCount == 0)  // cjxl 0.7 drops the GIF's loop count: forever
        #expect(image.frames.map(\.duration) == [.milliseconds(80), .milliseconds(120), .milliseconds(200)])
        for index in 0..<3 {
            #expect(image.frame(at: index).pixels == (try CodecFixtures.reference("jxl-animated.ref\(index).png")).pixels)
        }
        let first = try JXLCoder().decode(data, options: .init(firstFrameOnly: true))
        #expect(first.frames.isEmpty && first.frameCount == 3 && first.pixels == image.frames[0].pixels)
    }

    @Test func pixelLimitCountsFramesAndThumbnailsShrink() throws {
        let data = try CodecFixtures.data("jxl-animated.jxl")
        #expect(throws: ImageDecodingError.tooManyPixels(width: 40, height: 30, frames: 3, limit: 3_000)) {
            try JXLCoder().decode(data, options: .init(maxPixelCount: 3_000))
        }
        // One frame over the limit is refused as soon as the basic info is read.
        #expect(throws: ImageDecodingError.tooManyPixels(width: 40, height: 30, frames: 1, limit: 1_000)) {
            try JXLCoder().decode(data, options: .init(maxPixelCount: 1_000))
        }
        let thumbnail = try JXLCoder().decode(data, options: .init(thumbnailMaxPixelSize: 20))
        #expect(thumbnail.pixelWidth == 20 && thumbnail.pixelHeight == 15 && thumbnail.frames.count == 3)
    }

    @Test(arguments: ["jxl-lossless", "jxl-container", "jxl-animated", "jxl-lossy"])
    func truncatedOrDamagedFilesGiveTypedErrors(_ name: String) throws {
        let data = try CodecFixtures.data("\(name).jxl")
        for length in [1, 2, 12, data.count / 3, data.count / 2, data.count - 1] {
            #expect(throws: ImageDecodingError.self) { try JXLCoder().decode(data.prefix(length), options: .default) }
            do { _ = try JXLCoder().decode(data.prefix(length), options: .default) } catch {
                guard case .corrupt(.jpegXL, _) = error else { Issue.record("\(error)"); continue }
            }
        }
        var damaged = data
        for offset in stride(from: 20, to: damaged.count, by: 13) { damaged[offset] ^= 0xA5 }
        do { _ = try JXLCoder().decode(damaged, options: .default) } catch {
            if case .corrupt(.jpegXL, _) = error {} else if case .tooManyPixels = error {} else { Issue.record("\(error)") }
        }
    }
}
