import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// A render whose deadline passes while its result is being written stops using the CPU
    /// (issue 25, "Deadlines stop the work"): lossy WebP looks at the cancel in libwebp's progress
    /// hook, GIF between rows of its palette passes and of its LZW, PNG every 4 MB of rows, JPEG
    /// every 16 rows (`JPEGRowEncodeTests`: a JPEG of 9 MP ends inside this deadline); AVIF and lossless WebP are
    /// written in a worker process that the cancel kills (libaom cannot be stopped inside a frame,
    /// and libwebp's lossless encoder does not call its hook for a second at a time). Before, a 9 MP noise
    /// picture kept encoding for seconds after the 504 (found by a red-team run: 17 s of CPU for a
    /// 16 MP AVIF at q=100).
    @Suite("Image server: encodes stop at the deadline")
    struct ServerEncodeDeadlineTests {
        /// 3000 × 3000 of noise: seconds to encode in each of these formats.
        static let noise = Result { try JPEGCoder().encode(NoiseImages.make(width: 3000, height: 3000), as: .jpeg, quality: 0.9) }

        /// Two frames of 1500 × 1500 noise as a lossy animated WebP: the source of a lossless
        /// animated WebP result, written frame by frame in the server (seconds a frame; decoding
        /// both takes a few tenths of a second in a debug build).
        static let noiseAnimation = Result { () throws -> Data in
            let frame = NoiseImages.make(width: 1500, height: 1500)
            var animation = frame
            animation.frames = [ImageFrame(pixels: frame.pixels, duration: .milliseconds(100)),
                                ImageFrame(pixels: NoiseImages.make(width: 1500, height: 1500, seed: 7).pixels, duration: .milliseconds(100))]
            animation.frameCount = 2
            return try WebPCoder().encode(animation, as: .webp, quality: 0.5)
        }

        @Test(arguments: [("avif", "100"), ("webp", "100"), ("webp", "80"), ("gif", "80"), ("png", "80")])
        func anEncodePastItsDeadlineStopsUsingTheCPU(format: String, quality: String) async throws {
            try await Self.expectAStoppedRender(
                of: ("noise.jpg", try Self.noise.get()), query: "format=\(format)&q=\(quality)", isolated: format == "avif" || quality == "100")
        }

        /// An animation written as lossless WebP (`q=100`) stops at the deadline too: its frames
        /// are made first and the encode worker writes the file, killed at the cancel. Written
        /// frame by frame in the server (stop 48), it stopped at once in most runs (libwebp calls
        /// the hook inside a lossless frame) but in one full run used the CPU for the whole 2 s
        /// after the 504: the hook is not called while a frame's backward references are computed.
        @Test func anAnimationWrittenAsLosslessWebPStopsAtTheDeadline() async throws {
            try await Self.expectAStoppedRender(of: ("noise.webp", try Self.noiseAnimation.get()), query: "format=webp&q=100", isolated: true)
        }

        /// The same path when there is time: a 3-frame 200 × 200 GIF asked as lossless WebP comes
        /// back from the worker animated, frame for frame the GIF's pixels, with its delays.
        @Test func aLosslessWebPAnimationFromTheWorkerKeepsEveryFrame() async throws {
            let frames = (0..<3).map { n in
                let rgba: [UInt8] = [[255, 0, 0, 255], [0, 200, 0, 255], [0, 0, 180, 255]][n]
                let pixels = (0..<(200 * 200)).flatMap { index in index % 200 < 100 ? rgba : [255, 255, 255, 255] }
                return ImageFrame(pixels: pixels, duration: .milliseconds([70, 150, 40][n]))
            }
            let gif = try GIFCoder().encode(Image(format: .gif, pixelWidth: 200, pixelHeight: 200, frames: frames, loopCount: 0), as: .gif, quality: 1)
            try await withOrigin(files: ["three.gif": gif]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(["--allow-private-networks"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let base = "http://127.0.0.1:\(serve.port)"
                let source = ServerHarness.encode(origin.imageURL("three.gif").absoluteString)
                let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source)&format=webp&q=100", client: .shared)
                #expect(status == 200)
                let webp = try ImageCoderRegistry.default.decode(body)
                let original = try ImageCoderRegistry.default.decode(gif)
                #expect(webp.format == .webp && webp.frames.count == 3)
                #expect(webp.frames.map(\.pixels) == original.frames.map(\.pixels))
                #expect(webp.frames.map(\.duration) == [.milliseconds(70), .milliseconds(150), .milliseconds(40)])
                let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: .shared).1, as: UTF8.self)
                #expect(metrics.contains(#"webimage_isolated_encodes_total{outcome="encoded"} 1"#))
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }

        /// `file` rendered with `query` by a `serve` with a 1 s processing deadline: a 504, next to
        /// no CPU after it, the worker's encode counted cancelled when `isolated`, and the slot back.
        static func expectAStoppedRender(of file: (name: String, data: Data), query: String, isolated: Bool) async throws {
            try await withOrigin(files: [file.name: file.data, "small.jpg": SampleFiles.standard["small.jpg"]!]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "1", "--concurrency", "1", "--queue", "0"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                let pid = serve.process.processIdentifier
                let source = ServerHarness.encode(origin.imageURL(file.name).absoluteString)
                let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source)&\(query)", client: client)
                #expect(status == 504, "\(query): \(String(decoding: body.prefix(200), as: UTF8.self))")
                // Whatever still ran stops within a few rows (or the worker is killed): the server,
                // its reaped children and its spare use next to no CPU in the next two seconds.
                try await Task.sleep(for: .milliseconds(300))
                let left = ServerDecodeIsolationTests.children(of: pid)
                func cpu() -> Double { ServerDecodeIsolationTests.cpuSecondsWithChildren(pid) + left.compactMap(ProcessUsage.cpuSeconds).reduce(0, +) }
                let before = cpu()
                try await Task.sleep(for: .seconds(2))
                let after = cpu()
                #expect(after - before < 0.3, "\(query): \(after - before) s of CPU in the 2 s after the 504")
                if isolated {
                    let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: client).1, as: UTF8.self)
                    #expect(metrics.contains(#"webimage_isolated_encodes_total{outcome="cancelled"} 1"#),
                            "\(query): \(metrics.split(separator: "\n").filter { $0.contains("isolated") })")
                }
                // The slot came back: a small render succeeds.
                let small = ServerHarness.encode(origin.imageURL("small.jpg").absoluteString)
                #expect(try await ServeCommandTests.get("\(base)/img?url=\(small)&w=64&\(query)", client: client).0 == 200)
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
