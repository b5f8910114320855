import Foundation
import Testing
import WebImage

/// The animated encoders take frames one at a time and write what encoding one ``Image`` writes;
/// ``AnimationTranscoder`` decodes, processes and encodes frame by frame.
@Suite("Animated encoders, frame by frame")
struct AnimatedEncodingTests {
    /// Three 4 × 3 frames: opaque red, transparent, opaque blue.
    static let frames: [ImageFrame] = [[255, 0, 0, 255], [0, 0, 0, 0], [0, 0, 255, 255]].enumerated().map { index, pixel in
        ImageFrame(pixels: Array([[UInt8]](repeating: pixel, count: 12).joined()), duration: .milliseconds(100 * (index + 1)))
    }

    @Test(arguments: [ImageFormat.gif, .webp, .apng])
    func framesAddedOneAtATimeDecodeAsTheyWereGiven(format: ImageFormat) throws {
        let parameters = AnimationEncodingParameters(pixelWidth: 4, pixelHeight: 3, loopCount: 3, quality: 1)
        let encoder = try #require(try ImageCoderRegistry.default.animatedEncoder(as: format, parameters))
        for frame in Self.frames { try encoder.add(frame) }
        #expect(encoder.frameCount == 3)
        let streamed = try encoder.finish()
        let decoded = try ImageCoderRegistry.default.decode(streamed)
        #expect(decoded.frames.count == 3 && decoded.loopCount == 3)
        #expect(decoded.frames.map(\.duration) == Self.frames.map(\.duration))
        // The second frame's transparency shows: the red before it does not show through.
        #expect(decoded.frames[1].pixels.prefix(4) == [0, 0, 0, 0])
        #expect(decoded.frames[2].pixels.prefix(4) == [0, 0, 255, 255])
        // One Image of the same frames is written the same way.
        let whole = Image(format: format, pixelWidth: 4, pixelHeight: 3, frames: Self.frames, loopCount: 3)
        #expect(try ImageCoderRegistry.default.encode(whole, as: format, quality: 1) == streamed)
        #expect(throws: ImageEncodingError.self) { try encoder.finish() }
    }

    @Test func framesOfTheWrongSizeAndEncodersWithoutAnimationsAreRefused() throws {
        let parameters = AnimationEncodingParameters(pixelWidth: 4, pixelHeight: 3, loopCount: 0)
        let gif = try #require(try ImageCoderRegistry.default.animatedEncoder(as: .gif, parameters))
        #expect(throws: ImageEncodingError.self) { try gif.add(ImageFrame(pixels: [0, 0, 0, 255], duration: .zero)) }
        #expect(throws: ImageEncodingError.self) { try gif.finish() }
        #expect(try ImageCoderRegistry.default.animatedEncoder(as: .jpeg, parameters) == nil)
        #expect(throws: ImageEncodingError.self) {
            try ImageCoderRegistry.default.animatedEncoder(as: .gif, AnimationEncodingParameters(pixelWidth: 70_000, pixelHeight: 1, loopCount: 0))
        }
    }

    @Test(arguments: [ImageFormat.gif, .webp, .apng])
    func theTranscoderProcessesEveryFrameAndDropsThoseOverTheLimit(format: ImageFormat) throws {
        let source = try ImageCoderRegistry.default.encode(
            Image(format: .gif, pixelWidth: 4, pixelHeight: 3, frames: Self.frames, loopCount: 0), as: .gif)
        let animation = try #require(try ImageCoderRegistry.default.animatedDecoder(for: source))
        let transcoder = AnimationTranscoder(format: format, quality: 1, maxFrames: 2)
        let (data, _) = try transcoder.transcode(animation, isOpaque: false) { frame in
            try frame.processed(by: [ImageProcessors.Resize(width: 8, height: 6, mode: .exact, upscale: true)])
        }
        let result = try ImageCoderRegistry.default.decode(data)
        #expect(result.format == format && result.frames.count == 2)
        #expect(result.pixelWidth == 8 && result.pixelHeight == 6)
        #expect(result.frames.map(\.duration) == [.milliseconds(100), .milliseconds(200)])
    }
}
