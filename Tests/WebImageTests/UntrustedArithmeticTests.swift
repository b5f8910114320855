import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
/// Fields at their type's limits, through the real decoders and encoders: arithmetic on what a
/// file (or a caller's ``Image``) says must end in a value or a typed error, never a trap
/// (docs/architecture/untrusted-arithmetic.md).
@Suite("Untrusted arithmetic: extreme values never trap")
struct UntrustedArithmeticTests {
    static let longestWebPDelay = Duration.milliseconds(ExtremeWebP.longestDelay)

    @Test func webpTimestampsPastInt32MaxDecode() throws {
        let data = try ExtremeWebP.longAnimation()
        #expect(data.count <= 10_240)  // about 10 KB
        let image = try ImageCoderRegistry.default.decode(data)
        #expect(image.format == .webp && image.frames.count == 200 && image.frameCount == 200)
        #expect(image.frames.allSatisfy { $0.duration == Self.longestWebPDelay })
    }

    @Test func webpTimestampsPastInt32MaxDecodeFrameByFrame() throws {
        let data = try ExtremeWebP.longAnimation()
        let animation = try #require(try ImageCoderRegistry.default.animatedDecoder(for: data))
        #expect(animation.frameCount == 200)
        for index in 0..<animation.frameCount {
            #expect(animation.duration(at: index) == Self.longestWebPDelay)
            #expect(try animation.frame(at: index).duration == Self.longestWebPDelay, "frame \(index)")
        }
        // Back to the start, then past the wrap again.
        #expect(try animation.frame(at: 0).duration == Self.longestWebPDelay)
        #expect(try animation.frame(at: 150).duration == Self.longestWebPDelay)
    }

    @Test func webpTimestampsPastInt32MaxInAChildProcess() async throws {
        let file = temporaryDirectory().appendingPathComponent("long.webp")
        try ExtremeWebP.longAnimation().write(to: file)
        let result = try await WebImageCommand.run(["info", file.path, "--decode", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let info = try JSONDecoder().decode(InfoCommandTests.Info.self, from: Data(result.stdout.utf8))
        #expect(info.format == "webp" && info.frames == 200 && info.decoded)
    }

    @Test func gifOfLongDelaysPastInt32MaxMillisecondsIsATypedWebPError() throws {
        let gif = try ImageCoderRegistry.default.decode(ExtremeGIF.longAnimation())
        #expect(gif.frames.count == 3_400 && gif.frames.allSatisfy { $0.duration == .milliseconds(655_350) })
        #expect(throws: ImageEncodingError.self) { _ = try ImageCoderRegistry.default.encode(gif, as: .webp) }
        do {
            _ = try ImageCoderRegistry.default.encode(gif, as: .webp)
        } catch {
            #expect(error.description.contains("2147483647 ms"), "\(error)")
        }
        // 3,276 frames last 2,146,926,600 ms, just under Int32.max: they encode, and play as long
        // (libwebp merges identical frames, so the frame count may differ; the total may not).
        var shorter = gif
        shorter.frames = Array(gif.frames.prefix(3_276))
        let back = try ImageCoderRegistry.default.decode(ImageCoderRegistry.default.encode(shorter, as: .webp))
        #expect(back.frames.reduce(Duration.zero) { $0 + $1.duration } == .milliseconds(3_276 * 655_350))
    }

    @Test func gifOfLongDelaysAskedAsWebPThroughTheCLIFailsCleanly() async throws {
        try await withOrigin(files: ["long.gif": ExtremeGIF.longAnimation()]) { origin in
            let output = temporaryDirectory()
            let result = try await WebImageCommand.run([
                "fetch", origin.imageURL("long.gif").absoluteString, "--format", "webp", "--output", output.path,
                "--cache-dir", temporaryDirectory().path,
            ])
            // The fetch fails (exit 3: the run finished, its one line failed) with the encoder's reason; before, the process trapped.
            #expect(result.status == 3, "\(result.status): \(result.stderr)")
            #expect((result.stdout + result.stderr).contains("2147483647 ms"), "\(result.stdout)\(result.stderr)")
            // GIF keeps its 16-bit delays: the same file asked as GIF is written.
            let again = try await WebImageCommand.run([
                "fetch", origin.imageURL("long.gif").absoluteString, "--format", "gif", "--output", output.path,
                "--cache-dir", temporaryDirectory().path,
            ])
            #expect(again.status == 0, "\(again.stderr)")
        }
    }

    @Test func webpEncoderClampsEachFrameToTwentyFourBits() throws {
        let durations: [Duration] = [.seconds(Int64.max), .seconds(Int64.min), .milliseconds(0xFF_FFFF + 1), .milliseconds(40)]
        // Frames differ, so that libwebp keeps each one.
        let frames = durations.enumerated().map { ImageFrame(pixels: [UInt8($0.offset * 60), 20, 30, 255], duration: $0.element) }
        let image = Image(format: .webp, pixelWidth: 1, pixelHeight: 1, frames: frames, loopCount: Int.max)
        let back = try ImageCoderRegistry.default.decode(ImageCoderRegistry.default.encode(image, as: .webp, quality: 1))
        #expect(back.frames.map(\.duration) == [Self.longestWebPDelay, .milliseconds(100), Self.longestWebPDelay, .milliseconds(40)])
        #expect(back.loopCount == 65_535)
        #expect(throws: ImageEncodingError.self) { _ = try ImageCoderRegistry.default.encode(image, as: .webp, quality: .nan) }
    }
}
}
