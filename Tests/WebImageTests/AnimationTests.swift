import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Animated GIF and WebP: compositing, durations, loop counts")
struct AnimationTests {
    // Palette: 0 red, 1 green, 2 blue, 3 white, 4 black.
    static let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0]
    static let red: [UInt8] = [255, 0, 0, 255], green: [UInt8] = [0, 255, 0, 255], blue: [UInt8] = [0, 0, 255, 255]
    static let white: [UInt8] = [255, 255, 255, 255], clear: [UInt8] = [0, 0, 0, 0]

    /// 8×8: a red frame; green 4×4 at (2,2), disposed to background; blue 4×4 at (0,0), disposed
    /// to previous; a checker of white and transparent at (4,4) with a local palette.
    static func disposalGIF(loop: Int? = 3) throws -> Data {
        var writer = GIFWriter(width: 8, height: 8, globalPalette: palette, loopCount: loop)
        writer.frames = [
            .init(left: 0, top: 0, width: 8, height: 8, indices: Array(repeating: 0, count: 64), disposal: .none, delayCentiseconds: 10),
            .init(left: 2, top: 2, width: 4, height: 4, indices: Array(repeating: 1, count: 16), disposal: .background, delayCentiseconds: 2),
            .init(left: 0, top: 0, width: 4, height: 4, indices: Array(repeating: 2, count: 16), disposal: .previous, delayCentiseconds: 0),
            .init(left: 4, top: 4, width: 4, height: 4, indices: (0..<16).map { UInt8(($0 % 4 + $0 / 4) % 2) },
                  palette: [255, 255, 255, 1, 2, 3], transparentIndex: 1, disposal: .none, delayCentiseconds: 5, interlaced: true),
        ]
        return try writer.encode()
    }

    /// What each frame must show, written from the disposal rules.
    static func expectedCanvas(frame: Int, x: Int, y: Int) -> [UInt8] {
        let inHole = (2..<6).contains(x) && (2..<6).contains(y)
        switch frame {
        case 0: return red
        case 1: return inHole ? green : red
        case 2: return x < 4 && y < 4 ? blue : inHole ? clear : red
        default:
            if x >= 4, y >= 4, (x - 4 + y - 4) % 2 == 0 { return white }
            return inHole ? clear : red
        }
    }

    @Test func gifDisposalMethodsCompositeLikeBrowsers() throws {
        let image = try ImageCoderRegistry.default.decode(try Self.disposalGIF())
        #expect(image.format == .gif && image.isAnimated && image.frameCount == 4 && image.frames.count == 4)
        #expect(!image.isOpaque)
        for (index, frame) in image.frames.enumerated() {
            for y in 0..<8 {
                for x in 0..<8 {
                    let i = (y * 8 + x) * 4
                    #expect(Array(frame.pixels[i..<i + 4]) == Self.expectedCanvas(frame: index, x: x, y: y), "frame \(index) at \(x),\(y)")
                }
            }
        }
        #expect(image.pixels == image.frames[0].pixels)
    }

    @Test func gifDelaysAreClampedAndLoopCountRead() throws {
        let image = try ImageCoderRegistry.default.decode(try Self.disposalGIF(loop: 3))
        #expect(image.frames.map(\.duration) == [.milliseconds(100), .milliseconds(20), .milliseconds(100), .milliseconds(50)])
        #expect(image.totalDuration == .milliseconds(270))
        #expect(image.loopCount == 3)
        #expect(try ImageCoderRegistry.default.decode(try Self.disposalGIF(loop: 0)).loopCount == 0)
        #expect(try ImageCoderRegistry.default.decode(try Self.disposalGIF(loop: nil)).loopCount == 1)
    }

    @Test func clampFollowsBrowsers() {
        #expect(ImageFrame.clampedDuration(milliseconds: 0) == .milliseconds(100))
        #expect(ImageFrame.clampedDuration(milliseconds: 10) == .milliseconds(100))
        #expect(ImageFrame.clampedDuration(milliseconds: 11) == .milliseconds(11))
    }

    @Test func headerCountsFramesWithoutDecoding() throws {
        let header = try GIFCoder().readHeader(try Self.disposalGIF())
        #expect(header == ImageHeader(format: .gif, pixelWidth: 8, pixelHeight: 8, frameCount: 4, hasAlpha: true))
    }

    @Test func firstFrameOnlyDecodesOneFrameButReportsTheCount() throws {
        let image = try ImageCoderRegistry.default.decode(try Self.disposalGIF(), options: .init(firstFrameOnly: true))
        #expect(image.frames.isEmpty && image.frameCount == 4 && !image.isAnimated)
        #expect(image.pixels == Array(repeating: Self.red, count: 64).flatMap { $0 })
        #expect(image.cost == 8 * 8 * 4)
    }

    @Test func firstFrameOnlyWorksForWebPToo() throws {
        let source = Self.flatAnimation()
        let data = try WebPCoder().encode(source, as: .webp, quality: 1)
        let image = try ImageCoderRegistry.default.decode(data, options: .init(firstFrameOnly: true))
        #expect(image.frames.isEmpty && image.frameCount == 3 && image.loopCount == 2)
        #expect(image.pixels == source.frames[0].pixels)
    }

    @Test func costCountsEveryFrame() throws {
        let image = try ImageCoderRegistry.default.decode(try Self.disposalGIF())
        #expect(image.cost == 4 * 8 * 8 * 4)
        #expect(image.frame(at: 1).pixels == image.frames[1].pixels && image.frame(at: 1).frames.isEmpty)
    }

    @Test func pixelLimitCountsAllFrames() throws {
        // 64 pixels × 4 frames = 256: one frame fits a limit of 200, all four do not.
        let data = try Self.disposalGIF()
        #expect(throws: ImageDecodingError.tooManyPixels(width: 8, height: 8, frames: 4, limit: 200)) {
            _ = try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 200))
        }
        #expect(try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 200, firstFrameOnly: true)).pixelWidth == 8)
    }

    @Test(arguments: [ImageFormat.gif, .webp])
    func encodedAnimationRoundTripsExactly(format: ImageFormat) throws {
        let source = Self.flatAnimation()
        let data = try ImageCoderRegistry.default.encode(source, as: format, quality: 1)
        let decoded = try ImageCoderRegistry.default.decode(data)
        #expect(decoded.format == format && decoded.frameCount == 3 && decoded.loopCount == 2)
        #expect(decoded.frames.map(\.pixels) == source.frames.map(\.pixels))
        #expect(decoded.frames.map(\.duration) == [.milliseconds(70), .milliseconds(150), .milliseconds(40)])
        #expect(try ImageCoderRegistry.default.readHeader(data).frameCount == 3)
    }

    @Test func lossyAnimatedWebPKeepsFramesAndTimings() throws {
        let source = SampleImages.animation(width: 48, height: 32, count: 4, delay: .milliseconds(60), loopCount: 0)
        let decoded = try ImageCoderRegistry.default.decode(try WebPCoder().encode(source, as: .webp, quality: 0.9))
        #expect(decoded.frames.count == 4 && decoded.loopCount == 0)
        #expect(decoded.frames.allSatisfy { $0.duration == .milliseconds(60) })
        for index in 0..<4 { #expect(psnr(decoded.frame(at: index), source.frame(at: index)) > 28) }
    }

    /// Three distinct frames with few colours and a transparent corner (so GIF is lossless too).
    static func flatAnimation() -> Image {
        let colours: [[UInt8]] = [red, green, blue]
        let frames = colours.enumerated().map { n, colour in
            let pixels = (0..<(12 * 10)).flatMap { i -> [UInt8] in
                let x = i % 12, y = i / 12
                if x < 3 && y < 3 { return clear }
                return x >= 4 + n && x < 8 + n && y >= 2 ? white : colour
            }
            return ImageFrame(pixels: pixels, duration: .milliseconds([70, 150, 40][n]))
        }
        return Image(format: .gif, pixelWidth: 12, pixelHeight: 10, frames: frames, loopCount: 2)
    }
}
