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
}
