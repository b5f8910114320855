import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
    /// Long animations go through `info --decode` and `serve` one frame at a time: the peak RSS of
    /// the real processes stays a few canvases above a small image's, where every frame decoded
    /// at once would take hundreds of megabytes.
    @Suite("Animations stream: peak memory of child processes")
    struct AnimationStreamingMemoryTests {
        /// 160 frames on a 1000 × 1000 screen (a few KB): 640 MB as composited frames all at once.
        /// Each frame differs from the one before, so no encoder merges two into one.
        static let frames = 160
        static let long = GIFBomb.distinctFrames(width: 1000, height: 1000, frames: frames)

        @Test func infoDecodeWalksALongAnimationInAFewCanvases() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let small = directory.appendingPathComponent("small.jpg"), long = directory.appendingPathComponent("long.gif")
            try SampleFiles.standard["small.jpg"]!.write(to: small)
            try Self.long.write(to: long)
            let baseline = try await BombMemoryTests.peakMemory(["info", small.path, "--decode"])
            #expect(baseline.status == 0, "\(baseline.output)")
            let run = try await BombMemoryTests.peakMemory(["info", long.path, "--decode", "--json"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("\"decoded\":true") && run.output.contains("\"frames\":\(Self.frames)"), "\(run.output)")
            // One canvas is 4 MB; the decoder holds it and the frame it gave.
            #expect(run.bytes < baseline.bytes + 48 << 20, "peak \(run.bytes >> 20) MB, baseline \(baseline.bytes >> 20) MB")
        }

        /// `fetch --resize --format webp` of an animation past the 50 MP limit (60 frames of 1 MP):
        /// the pipeline decodes its first frame, the file is transcoded frame by frame, and the
        /// process stays a few canvases above a small image's fetch (240 MB all at once).
        @Test func fetchWritesALongAnimationFrameByFrame() async throws {
            let frames = 60
            let long = GIFBomb.distinctFrames(width: 1000, height: 1000, frames: frames)
            let endless = GIFBomb.distinctFrames(width: 1000, height: 1000, frames: 1_100)
            try await withOrigin(files: ["long.gif": long, "endless.gif": endless, "small.jpg": SampleFiles.standard["small.jpg"]!]) { origin in
                let directory = temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                func fetch(_ name: String, into folder: String) async throws -> (status: Int32, bytes: Int, output: String) {
                    try await BombMemoryTests.peakMemory([
                        "fetch", origin.imageURL(name).absoluteString, "--output", directory.appendingPathComponent(folder).path,
                        "--no-cache", "--resize", "100x100", "--format", "webp"])
                }
                let baseline = try await fetch("small.jpg", into: "small")
                #expect(baseline.status == 0, "\(baseline.output)")
                let run = try await fetch("long.gif", into: "long")
                #expect(run.status == 0, "\(run.output)")
                let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("long").path).first { $0.hasSuffix(".webp") })
                let image = try ImageCoderRegistry.default.decode(try Data(contentsOf: directory.appendingPathComponent("long/" + file)))
                #expect(image.frames.count == frames && image.pixelWidth == 100, "\(image.frames.count) frames, \(image.pixelWidth) wide")
                #expect(run.bytes < baseline.bytes + 64 << 20, "peak \(run.bytes >> 20) MB, baseline \(baseline.bytes >> 20) MB")
                // Past the streamed work bound (20 × the limit in frames × canvas): refused with the reason.
                let refused = try await WebImageCommand.run([
                    "fetch", origin.imageURL("endless.gif").absoluteString, "--output", directory.appendingPathComponent("e").path,
                    "--no-cache", "--format", "webp"])
                #expect(refused.status != 0 && (refused.stdout + refused.stderr).contains("pixel"), "\(refused.stdout) \(refused.stderr)")
            }
        }

        @Test func serveRendersALongAnimationFrameByFrame() async throws {
            try await withOrigin(files: ["long.gif": Self.long]) { origin in
                let serve = try await ServerTests.ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "300",
                     "--max-animation-frames", "\(Self.frames)", "--max-source-pixels", "200000000"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let source = ServerHarness.encode(origin.imageURL("long.gif").absoluteString)
                // One format: each render takes ~50 s in a debug build; the GIF encoder streams the same way (AnimatedEncodingTests).
                for format in ["webp"] {
                    let url = "http://127.0.0.1:\(serve.port)/img?url=\(source)&w=100&format=\(format)"
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(300))
                    let body = Data(buffer: try await response.body.collect(upTo: 10 << 20))
                    #expect(response.status.code == 200, "\(format): \(String(decoding: body.prefix(200), as: UTF8.self))")
                    let image = try ImageCoderRegistry.default.decode(body)
                    #expect(image.frames.count == Self.frames && image.pixelWidth == 100, "\(format): \(image.frames.count) frames, \(image.pixelWidth) wide")
                }
                let pid = serve.process.processIdentifier
                let peak = ProcessUsage.peakResidentBytes(pid) ?? .max
                // All frames decoded at once would be 640 MB, before the resized copies.
                #expect(peak < 256 << 20, "peak RSS \(peak >> 20) MB")
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
