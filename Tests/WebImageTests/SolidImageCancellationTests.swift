import CJxl  // the parallel runner's C types
import CWebP
import Foundation
import Testing
@testable import WebImage

/// The attacker's cheap file: one colour over 49 MP is a few KB of JPEG XL or WebP, one input
/// piece, and was one uninterruptible library call of up to 5.7 s. A cancel now stops it within
/// 100 ms of CPU: libjxl's parallel sections run through a runner that refuses the rest of a
/// cancelled task's section, and WebP is given to libwebp in pieces of 1/128 of its coded data
/// (issue 25, "Deadlines stop the work").
extension HeavyTests {
    @Suite("Cancellation stops a tiny file's huge decode")
    struct SolidImageCancellationTests {
        static let options = ImageDecodingOptions(maxPixelCount: 50_000_000)
        /// The colour of every pixel of the solid files.
        static let colour: [UInt8] = [40, 120, 200]

        // MARK: JPEG XL

        /// 7000 × 7000 of `colour`: lossless effort 3 (22 KB, 784 modular groups) and lossy (7 KB).
        static func solidJXL(lossless: Bool) throws -> Data {
            try CodecFixtures.data(lossless ? "jxl-solid-49mp-lossless.jxl" : "jxl-solid-49mp-lossy.jxl")
        }

        /// Cancelled 5 ms into the decode (modular groups, or the lossy file's DC groups) and,
        /// lossy, 300 ms in (after the adaptive DC smoothing, which is never refused: libjxl would
        /// trap): the decode throws `.cancelled`, not a corrupt-file error, within 100 ms of CPU.
        @Test(arguments: [(true, 5), (false, 5), (false, 300)])
        func aCancelStopsASolidJPEGXL(lossless: Bool, afterMilliseconds: Int) async throws {
            let jxl = try Self.solidJXL(lossless: lossless)
            #expect(jxl.count < JXLCoder.Session.pieceSize, "one piece of input")
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(afterMilliseconds)) {
                () throws(ImageDecodingError) in _ = try JXLCoder().decode(jxl, options: Self.options)
            }
            #expect(error == .cancelled, "the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        /// Not cancelled, the same files decode whole: every pixel the colour (lossless exactly).
        @Test(arguments: [true, false])
        func anUncancelledSolidJPEGXLDecodesWhole(lossless: Bool) throws {
            let image = try JXLCoder().decode(try Self.solidJXL(lossless: lossless), options: Self.options)
            #expect(image.pixelWidth == 7000 && image.pixelHeight == 7000 && image.isOpaque)
            Self.expectSolid(image.pixels, colour: Self.colour + [255], tolerance: lossless ? 0 : 2)
        }

        /// The runner itself, in a cancelled task: a section starting at 0 is refused before any
        /// item runs and the session remembers it; one starting at 1 (adaptive DC smoothing, under
        /// `JXL_CHECK` in libjxl 0.7) runs every item. Not cancelled, every item runs.
        @Test func theRunnerRefusesOnlySectionsFromZeroOfACancelledTask() async throws {
            let jxl = try CodecFixtures.data("jxl-lossless.jxl")
            let outcomes = await Task.detached { () -> [RunnerOutcome] in
                var outcomes = [RunnerOutcome.run(jxl, start: 0, end: 5)]
                withUnsafeCurrentTask { $0?.cancel() }
                outcomes += [RunnerOutcome.run(jxl, start: 0, end: 5), RunnerOutcome.run(jxl, start: 1, end: 5)]
                return outcomes
            }.value
            #expect(outcomes == [
                RunnerOutcome(status: 0, items: [0, 1, 2, 3, 4], initialized: true, refused: false),
                RunnerOutcome(status: -1, items: [], initialized: false, refused: true),
                RunnerOutcome(status: 0, items: [1, 2, 3, 4], initialized: true, refused: false),
            ])
        }

        /// What ``JXLCoder/Session/cancellableRunner`` did with one section of `start ..< end`.
        struct RunnerOutcome: Equatable {
            var status: Int32
            var items: [UInt32]
            var initialized: Bool
            var refused: Bool

            /// Items run and the init call are recorded in a `Recorder` passed as libjxl's opaque.
            final class Recorder {
                var items: [UInt32] = []
                var initialized = false
            }

            static func run(_ jxl: Data, start: UInt32, end: UInt32) -> RunnerOutcome {
                let recorder = Recorder()
                return jxl.withUnsafeBytes { bytes in
                    guard let session = try? JXLCoder.Session(bytes, events: 0) else {
                        return RunnerOutcome(status: 99, items: [], initialized: false, refused: false)
                    }
                    let status = JXLCoder.Session.cancellableRunner(
                        Unmanaged.passUnretained(session).toOpaque(), Unmanaged.passUnretained(recorder).toOpaque(),
                        { opaque, _ in
                            Unmanaged<Recorder>.fromOpaque(opaque!).takeUnretainedValue().initialized = true
                            return 0
                        },
                        { opaque, value, _ in Unmanaged<Recorder>.fromOpaque(opaque!).takeUnretainedValue().items.append(value) },
                        start, end)
                    return RunnerOutcome(
                        status: status, items: recorder.items, initialized: recorder.initialized, refused: session.cancelledBySection)
                }
            }
        }

        // MARK: WebP

        /// 16383 × 3000 (49 MP, WebP's widest) of `colour` by libwebp itself: lossy (88 KB),
        /// lossy with alpha 128 (90 KB: an `ALPH` chunk) and lossless (2 KB).
        static let solidWebPs = Task { () -> [String: Data] in
            var files: [String: Data] = [:]
            for (name, lossless, alpha) in [("lossy", false, false), ("lossy alpha", false, true), ("lossless", true, false)] {
                files[name] = encodeSolidWebP(lossless: lossless, alpha: alpha)
            }
            return files
        }

        /// The same kinds at 16383 × 600 (9.8 MP), still in dozens of pieces when lossy: a
        /// whole 49 MP decode compared with the one-call pixels took 24 s each in a debug build.
        static let shorterSolidWebPs = Task { () -> [String: Data] in
            var files: [String: Data] = [:]
            for (name, lossless, alpha) in [("lossy", false, false), ("lossy alpha", false, true), ("lossless", true, false)] {
                files[name] = encodeSolidWebP(lossless: lossless, alpha: alpha, height: 600)
            }
            return files
        }

        static func encodeSolidWebP(lossless: Bool, alpha: Bool, height: Int = 3000) -> Data {
            let width = 16383
            // One row, then copies of it (a loop over 49 M pixels is slow in a debug build).
            let row = [[UInt8]](repeating: colour + [alpha ? 128 : 255], count: width).flatMap { $0 }
            var rgba = [UInt8](repeating: 0, count: width * height * 4)
            rgba.withUnsafeMutableBytes { all in
                for y in 0..<height { (all.baseAddress! + y * row.count).copyMemory(from: row, byteCount: row.count) }
            }
            var output: UnsafeMutablePointer<UInt8>?
            let size = rgba.withUnsafeBufferPointer { src in
                lossless ? WebPEncodeLosslessRGBA(src.baseAddress, Int32(width), Int32(height), Int32(width * 4), &output)
                    : WebPEncodeRGBA(src.baseAddress, Int32(width), Int32(height), Int32(width * 4), 90, &output)
            }
            defer { WebPFree(output) }
            return output.map { Data(bytes: $0, count: size) } ?? Data()
        }

        @Test(arguments: ["lossy", "lossy alpha", "lossless"])
        func aCancelStopsASolidWebP(kind: String) async throws {
            let webp = try #require(await Self.solidWebPs.value[kind])
            #expect(!webp.isEmpty && webp.count < 1 << 17, "\(webp.count) bytes")
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(5)) {
                () throws(ImageDecodingError) in _ = try WebPCoder().decode(webp, options: Self.options)
            }
            #expect(error == .cancelled, "the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        /// Not cancelled, the pieces give `WebPDecode`'s one-call pixels.
        @Test(arguments: ["lossy", "lossy alpha", "lossless"])
        func anUncancelledSolidWebPIsTheOneCallImage(kind: String) async throws {
            let webp = try #require(await Self.shorterSolidWebPs.value[kind])
            #expect(WebPCoder.pieces(for: webp).size <= max(256, webp.count / 100), "many pieces")
            #expect(kind == "lossless" || webp.count / WebPCoder.pieces(for: webp).size >= 32, "\(webp.count) bytes")
            let image = try WebPCoder().decode(webp, options: Self.options)
            var expected = try WebPPieceDecodeTests.oneCall(webp, width: 16383, height: 600, scaled: false)
            _ = PixelOperations.premultiply(&expected)
            #expect(image.pixels == expected)
        }

        /// Every pixel is `colour` (tolerance 0: compared row by row with `memcmp`), or every 31st
        /// within `tolerance` (a loop over 49 M pixels is slow in a debug build).
        static func expectSolid(_ pixels: [UInt8], colour: [UInt8], tolerance: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            let rowBytes = 7000 * 4
            let row = [[UInt8]](repeating: colour, count: rowBytes / 4).flatMap { $0 }
            let far = pixels.withUnsafeBytes { p -> Int? in
                if tolerance == 0 {
                    return stride(from: 0, to: p.count, by: rowBytes).first { memcmp(p.baseAddress! + $0, row, min(rowBytes, p.count - $0)) != 0 }
                }
                return stride(from: 0, to: p.count, by: 31 * 4).first { at in (0..<4).contains { abs(Int(p[at + $0]) - Int(colour[$0])) > tolerance } }
            }
            #expect(far == nil, "byte \(far ?? -1) is not \(colour)", sourceLocation: sourceLocation)
        }
    }
}
