import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("AVIF over libavif")
struct AVIFTests {
    @Test func sequenceKeepsFramesAndDurations() throws {
        let source = AnimationTests.flatAnimation()
        let data = try ImageCoderRegistry.default.encode(source, as: .avif, quality: 1)
        #expect(ImageFormat(sniffing: data) == .avif)
        let decoded = try ImageCoderRegistry.default.decode(data)
        #expect(decoded.format == .avif && decoded.frameCount == 3 && decoded.frames.count == 3)
        #expect(decoded.frames.map(\.duration) == [.milliseconds(70), .milliseconds(150), .milliseconds(40)])
        for index in 0..<3 {
            let difference = maxDifference(decoded.frame(at: index), source.frame(at: index))
            #expect(difference == 0, "frame \(index): off by \(difference)")
        }
        #expect(try ImageCoderRegistry.default.readHeader(data).frameCount == 3)
        let first = try ImageCoderRegistry.default.decode(data, options: .init(firstFrameOnly: true))
        #expect(first.frames.isEmpty && first.frameCount == 3 && first.pixels == source.frames[0].pixels)
    }

    @Test func thumbnailsAndLimitsApply() throws {
        let data = try AVIFCoder().encode(SampleImages.pattern(width: 200, height: 100), as: .avif, quality: 0.7)
        let thumbnail = try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 50))
        #expect(thumbnail.pixelWidth == 50 && thumbnail.pixelHeight == 25)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 200, height: 100, frames: 1, limit: 19_999)) {
            _ = try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 19_999))
        }
    }

    @Test func hugeDeclaredSizeIsATypedErrorWithoutDecoding() throws {
        // Rewrite the `ispe` property (the declared image size) to 100000 × 100000.
        var data = try AVIFCoder().encode(SampleImages.pattern(width: 16, height: 16), as: .avif, quality: 0.7)
        let ispe = try #require(data.firstRange(of: Data("ispe".utf8)))
        let size = UInt32(100_000).bigEndianBytes
        data.replaceSubrange(ispe.upperBound + 4..<ispe.upperBound + 12, with: size + size)
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(data) }
    }
}
