import Foundation
import Testing
import WebImage

/// A tiny animated WebP can hold a huge solid frame, which libwebp's `WebPAnimDecoderGetNext`
/// decoded in one call a cancel could not stop (0.29 s at 49 MP). Frames are now decoded in
/// pieces like stills, so a cancel stops a frame's decode within 100 ms of CPU, and leaves the
/// canvas as it was: the same decoder gives the frame afterwards (issue 25).
extension HeavyTests {
    @Suite("Cancellation stops an animated WebP's frame")
    struct AnimatedWebPCancellationTests {
        static let side = 7000
        /// Two canvases of 49 MP for the full decode.
        static let options = ImageDecodingOptions(maxPixelCount: 100_000_000)
        static let kinds = ["lossy", "lossy alpha", "lossless"]

        /// Two 7000 × 7000 frames of `SolidImageCancellationTests.colour` (alpha 128 for "lossy
        /// alpha": an `ALPH` chunk), the second not blending (a key frame), by libwebp.
        static let files = Task { () -> [String: Data] in
            var files: [String: Data] = [:]
            for kind in kinds { files[kind] = solidAnimation(lossless: kind == "lossless", alpha: kind == "lossy alpha") }
            return files
        }

        static func solidAnimation(lossless: Bool, alpha: Bool) -> Data {
            // One row, then copies of it (a loop over 49 M pixels is slow in a debug build).
            let row = [[UInt8]](repeating: SolidImageCancellationTests.colour + [alpha ? 128 : 255], count: side).flatMap { $0 }
            var rgba = [UInt8](repeating: 0, count: side * side * 4)
            rgba.withUnsafeMutableBytes { all in
                for y in 0..<side { (all.baseAddress! + y * row.count).copyMemory(from: row, byteCount: row.count) }
            }
            let still = WebPAnimationFixtures.still(rgba, width: side, height: side, lossless: lossless, quality: 90)
            let coding: WebPAnimationFixtures.Frame.Coding = lossless ? .lossless : alpha ? .lossyAlpha : .lossy
            return WebPAnimationFixtures.animation(width: side, height: side, [
                (WebPAnimationFixtures.Frame(width: side, height: side, coding: coding, seed: 0), still),
                (WebPAnimationFixtures.Frame(width: side, height: side, coding: coding, blends: false, seed: 0), still),
            ])
        }

        static func file(_ kind: String) async throws -> Data {
            let webp = try #require(await files.value[kind])
            #expect(!webp.isEmpty && webp.count < 1 << 18, "\(webp.count) bytes")
            return webp
        }

        /// The full decode, cancelled 5 ms into its first frame.
        @Test(arguments: kinds)
        func aCancelStopsTheFirstFrame(kind: String) async throws {
            let webp = try await Self.file(kind)
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(5)) {
                () throws(ImageDecodingError) in _ = try WebPCoder().decode(webp, options: Self.options)
            }
            #expect(error == .cancelled, "the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        /// The lossless full decode cancelled at several points: in the first frame's decode
        /// (138 ms of CPU here), and after it, in the copy and premultiplication of the canvas
        /// (0.45 s in a debug build), which looks between bands too.
        @Test(arguments: [5, 100, 250])
        func aCancelAnywhereInAFrameStops(afterMilliseconds: Int) async throws {
            let webp = try await Self.file("lossless")
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(afterMilliseconds)) {
                () throws(ImageDecodingError) in _ = try WebPCoder().decode(webp, options: Self.options)
            }
            #expect(error == .cancelled, "the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        /// The animated decoder, cancelled 5 ms into its second frame; then, not cancelled, the
        /// same decoder gives that frame whole (every pixel the colour, premultiplied). Opaque
        /// kinds only: premultiplying 49 MP of alpha 128 takes 23 s in a debug build.
        @Test(arguments: ["lossy", "lossless"])
        func aCancelStopsALaterFrameAndLeavesTheCanvasWhole(kind: String) async throws {
            let webp = try await Self.file(kind)
            let decoder = try WebPAnimationDecoder(webp, options: Self.options)
            _ = try decoder.frame(at: 0)
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(5)) {
                () throws(ImageDecodingError) in _ = try decoder.frame(at: 1)
            }
            #expect(error == .cancelled, "the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
            let frame = try decoder.frame(at: 1)
            SolidImageCancellationTests.expectSolid(frame.pixels, colour: SolidImageCancellationTests.colour + [255], tolerance: kind == "lossless" ? 0 : 2)
        }
    }
}
