import Foundation
import Testing
import WebImage
import WebImageOrigin

/// ``AnimatedImageDecoding``: frames decoded one at a time, in any order, against the full
/// decode of the same file, on the GIF, APNG, WebP and AVIF fixtures.
@Suite("Animated decoders: frames on demand equal the full decode", .cpuBound)
struct AnimatedDecodingTests {
    /// Every animated fixture, by name.
    static func animations() throws -> [(name: String, data: Data)] {
        let apngs = try FileManager.default.contentsOfDirectory(atPath: CoderFixtureTests.directory.path)
            .filter { $0.hasSuffix(".apng") && !$0.contains("broken") }.sorted()
        let gifs = try FileManager.default.contentsOfDirectory(atPath: CodecFixtures.directory.path)
            .filter { $0.hasSuffix(".gif") }.sorted()
        let translucent = SampleImages.animation(width: 40, height: 30, count: 5, alpha: true)
        return [("disposal.gif", try AnimationTests.disposalGIF())]
            + (try gifs.map { ($0, try CodecFixtures.data($0)) })
            + (try apngs.map { ($0, try CoderFixtureTests.data($0)) })
            + [
                ("lossless.webp", try SampleImages.animatedWebP(width: 40, height: 30, count: 5)),
                ("lossy-alpha.webp", try WebPCoder().encode(translucent, as: .webp, quality: 0.7)),
                ("rules.webp", WebPAnimationFixtures.animation(width: 64, height: 48, WebPAnimationCompositingTests.rules)),
                ("sequence.avif", try AVIFCoder().encode(AnimationTests.flatAnimation(), as: .avif, quality: 1)),
                ("lossy-sequence.avif", try AVIFCoder().encode(translucent, as: .avif, quality: 0.6)),
            ]
    }

    /// The frames of the full decode (a still image's pixels as its one frame).
    static func eagerFrames(_ image: Image) -> [[UInt8]] {
        image.frames.isEmpty ? [image.pixels] : image.frames.map(\.pixels)
    }

    @Test func everyFrameInOrderEqualsTheFullDecode() throws {
        for (name, data) in try Self.animations() {
            let full = try ImageCoderRegistry.default.decode(data)
            let lazy = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data), "\(name)")
            #expect(lazy.format == full.format && lazy.loopCount == full.loopCount, "\(name)")
            #expect(lazy.pixelWidth == full.pixelWidth && lazy.pixelHeight == full.pixelHeight, "\(name)")
            let eager = Self.eagerFrames(full)
            // A damaged GIF decodes leniently up to the damage; the lazy decoder then throws.
            #expect(lazy.frameCount == full.frameCount && eager.count <= lazy.frameCount, "\(name)")
            for index in eager.indices {
                let frame = try lazy.frame(at: index)
                #expect(frame.pixels == eager[index], "\(name) frame \(index)")
                if !full.frames.isEmpty {
                    #expect(frame.duration == full.frames[index].duration && lazy.duration(at: index) == frame.duration, "\(name) frame \(index)")
                }
            }
            for index in eager.count..<lazy.frameCount {
                #expect(throws: ImageDecodingError.self, "\(name) frame \(index)") { try lazy.frame(at: index) }
            }
        }
    }

    @Test func framesInReverseAndScatteredOrderEqualTheFullDecode() throws {
        for (name, data) in try Self.animations() {
            let eager = Self.eagerFrames(try ImageCoderRegistry.default.decode(data))
            let lazy = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data))
            let order = Array(eager.indices.reversed()) + eager.indices.filter { $0 % 2 == 1 } + [0, eager.count - 1, 0]
            for index in order {
                #expect(try lazy.frame(at: index).pixels == eager[index], "\(name) frame \(index)")
            }
        }
    }

    @Test func thumbnailFramesEqualTheFullThumbnailDecode() throws {
        let options = ImageDecodingOptions(thumbnailMaxPixelSize: 9)
        for (name, data) in try Self.animations() {
            let full = try ImageCoderRegistry.default.decode(data, options: options)
            let lazy = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data, options: options))
            #expect(lazy.pixelWidth == full.pixelWidth && lazy.pixelHeight == full.pixelHeight, "\(name)")
            for (index, pixels) in Self.eagerFrames(full).enumerated() {
                #expect(try lazy.frame(at: index).pixels == pixels, "\(name) frame \(index)")
            }
        }
    }

    @Test func pixelLimitCountsOneCanvasAndIsCheckedFirst() throws {
        let data = try AnimationTests.disposalGIF()  // 8×8, 4 frames
        let oneCanvas = ImageDecodingOptions(maxPixelCount: 64)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 8, height: 8, frames: 4, limit: 64)) {
            try ImageCoderRegistry.default.decode(data, options: oneCanvas)
        }
        let lazy = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data, options: oneCanvas))
        #expect(try lazy.frame(at: 3).pixels == ImageCoderRegistry.default.decode(data).frames[3].pixels)
        for animation in [data, try SampleImages.animatedWebP(width: 40, height: 30), try SampleImages.animatedPNG(width: 40, height: 30)] {
            #expect(throws: ImageDecodingError.self) {
                try ImageCoderRegistry.default.animatedDecoder(for: animation, options: .init(maxPixelCount: 63))
            }
        }
    }

    @Test func strictModeRefusesWhatTheFullDecodeRefuses() throws {
        for name in ["lenient-gif-outside.gif", "lenient-gif-no-trailer.gif", "lenient-gif-zero-screen.gif"] {
            let data = try CodecFixtures.data(name)
            #expect(throws: ImageDecodingError.self, "\(name)") { try ImageCoderRegistry.default.decode(data, options: .init(strict: true)) }
            #expect(throws: ImageDecodingError.self, "\(name)") {
                try ImageCoderRegistry.default.animatedDecoder(for: data, options: .init(strict: true))
            }
        }
        #expect(throws: ImageDecodingError.self) {
            let damaged = try ImageCoderRegistry.default.animatedDecoder(
                for: CodecFixtures.data("lenient-gif-bad-lzw.gif"), options: .init(strict: true))
            for index in 0..<(damaged?.frameCount ?? 0) { _ = try damaged?.frame(at: index) }
        }
    }

    @Test func brokenAPNGAndStillFormatsGiveNoAnimatedDecoder() throws {
        let broken = try CoderFixtureTests.data("apng-broken-sequence.apng")
        #expect(try ImageCoderRegistry.default.animatedDecoder(for: broken) == nil)
        #expect(try ImageCoderRegistry.default.decode(broken).format == .png)
        let jpeg = try SampleImages.jpeg(width: 20, height: 20, seed: 3)
        #expect(try ImageCoderRegistry.default.animatedDecoder(for: jpeg) == nil)
        #expect(throws: ImageDecodingError.empty) { try ImageCoderRegistry.default.animatedDecoder(for: Data()) }
    }

    /// Cut and corrupted animations give a typed error, from the decoder or from a frame, never a crash.
    @Test func truncatedAndCorruptAnimationsThrowTypedErrors() throws {
        for (name, data) in try Self.animations() {
            for cut in stride(from: 1, to: data.count, by: max(1, data.count / 23)) {
                var damaged = [Data(data.prefix(cut))]
                var flipped = data
                flipped[cut] ^= 0x5A
                damaged.append(flipped)
                for variant in damaged {
                    do {
                        guard let lazy = try ImageCoderRegistry.default.animatedDecoder(for: variant) else { continue }
                        for index in 0..<lazy.frameCount {
                            #expect(try lazy.frame(at: index).pixels.count == lazy.pixelWidth * lazy.pixelHeight * 4, "\(name) at \(cut)")
                        }
                    } catch {
                        #expect(!error.description.isEmpty, "\(name) at \(cut)")  // typed: ImageDecodingError
                    }
                }
            }
        }
    }
}
