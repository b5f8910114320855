import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// The per-request work budget: priced from the source's header before any pixel work, with
    /// a clear error; frames beyond the limit dropped; `process=` steps capped.
    @Suite("Image server: work budget")
    struct ServerBudgetTests {
        static let files: [String: Data] = [
            // 4 KB of GIF: 20 one-pixel frames on a 100 × 100 screen.
            "frames.gif": GIFBomb.manyFrames(width: 100, height: 100, frames: 20),
            "logo.png": SampleFiles.standard["logo.png"]!,
        ]

        @Test func anEnlargedAnimationOverTheBudgetIsRefusedBeforeAnyPixelWork() async throws {
            try await withImageServer(files: Self.files) { harness in
                #expect(Self.files["frames.gif"]!.count < 4096)
                // 7000 × 7000 × 20 frames = 980 MP, over the default 50 MP.
                let clock = ContinuousClock(), start = clock.now
                let reply = try await harness.image("frames.gif", [("w", "7000"), ("h", "7000"), ("fit", "fill"), ("enlarge", "1"), ("format", "gif")])
                ServerErrorTests.expectError(reply, 422, "output_too_large")
                #expect(reply.json?["message"]?.contains("20 frames") == true, "\(reply.json ?? [:])")
                #expect(clock.now - start < .seconds(5), "refused from the header, not after rendering")
                // Inside the budget the same source is enlarged as asked: 1500 × 1500 × 20 = 45 MP.
                let fits = try await harness.image("frames.gif", [("w", "300"), ("h", "300"), ("fit", "fill"), ("enlarge", "1"), ("format", "gif")])
                #expect(fits.status == 200)
                let image = try ImageCoderRegistry.default.decode(fits.body)
                #expect(image.pixelWidth == 300 && image.frames.count == 20)
                // A still output is one frame: 20 frames of 2000 × 2000 are over, one is not.
                let animated = try await harness.image("frames.gif", [("w", "2000"), ("h", "2000"), ("fit", "fill"), ("enlarge", "1"), ("format", "gif")])
                ServerErrorTests.expectError(animated, 422, "output_too_large")
                let still = try await harness.image("frames.gif", [("w", "2000"), ("h", "2000"), ("fit", "fill"), ("enlarge", "1"), ("format", "png")])
                #expect(still.status == 200, "\(String(decoding: still.body.prefix(200), as: UTF8.self))")
            }
        }

        @Test func theBudgetIsConfigurableAndCountsIntermediates() async throws {
            try await withImageServer(files: Self.files, { $0.maxOutputPixels = 1_000_000 }) { harness in
                // The result is 10 × 10, but the first step makes 4000 × 4000 (16 MP).
                let grown = try await harness.image("logo.png", [("process", "resize:4000x4000:exact:upscale,resize:10x10"), ("format", "png")])
                ServerErrorTests.expectError(grown, 422, "output_too_large")
                // A rotation grows the canvas: 1200 × 1200 at 45° needs about 1697 × 1697 (2.9 MP).
                let turned = try await harness.image("logo.png", [("process", "resize:1200x1200:exact:upscale,rotate:45,resize:10x10"), ("format", "png")])
                ServerErrorTests.expectError(turned, 422, "output_too_large")
                let small = try await harness.image("logo.png", [("process", "resize:900x900:exact:upscale,resize:10x10"), ("format", "png")])
                #expect(small.status == 200)
            }
        }

        @Test func aRenderPricedOverTheWholeMemoryBudgetIsRefused() async throws {
            try await withImageServer(files: Self.files, { $0.memoryBudgetBytes = 1 << 20 }) { harness in
                // 2000 × 2000 as PNG: the result alone is 16 MB, more than the 1 MB budget.
                let big = try await harness.image("logo.png", [("w", "2000"), ("h", "2000"), ("fit", "fill"), ("enlarge", "1"), ("format", "png")])
                ServerErrorTests.expectError(big, 422, "output_too_large")
                #expect(big.json?["message"]?.contains("memory budget") == true)
                #expect(try await harness.image("logo.png", [("w", "16"), ("format", "png")]).status == 200)
                // The render's last references go just after its answer is sent (seen held under load).
                #expect(await eventually { harness.server.memoryBudget.inUse == 0 }, "every reservation ended with its render")
            }
        }

        /// A blur holds a second full-size buffer while it runs: the price counts it, so a blur
        /// that would take the server past its memory budget is refused like any other render.
        @Test func aBlursSecondBufferIsPriced() async throws {
            try await withImageServer(files: Self.files, { $0.memoryBudgetBytes = 16 << 20 }) { harness in
                // 1000 × 1000: the result's 4 MB, the step's input and output, the encoder's 3 MB
                // (about 12 MB); a blur after it holds 4 MB more input, output and spare (about 20 MB).
                let plain = try await harness.image("logo.png", [("process", "resize:1000x1000:exact:upscale"), ("format", "jpeg")])
                #expect(plain.status == 200, "\(String(decoding: plain.body.prefix(200), as: UTF8.self))")
                let blurred = try await harness.image("logo.png", [("process", "resize:1000x1000:exact:upscale,blur:3"), ("format", "jpeg")])
                ServerErrorTests.expectError(blurred, 422, "output_too_large")
                #expect(blurred.json?["message"]?.contains("memory budget") == true, "\(blurred.json ?? [:])")
                // sharpen= holds the blurred copy and the blur's own buffer: priced the same way.
                let sharpened = try await harness.image("logo.png", [("process", "resize:1000x1000:exact:upscale"), ("sharpen", "1"), ("format", "jpeg")])
                ServerErrorTests.expectError(sharpened, 422, "output_too_large")
                #expect(sharpened.json?["message"]?.contains("memory budget") == true, "\(sharpened.json ?? [:])")
                #expect(await eventually { harness.server.memoryBudget.inUse == 0 }, "\(harness.server.memoryBudget.inUse) bytes still held")
            }
        }

        @Test func framesBeyondTheLimitAreDropped() async throws {
            try await withImageServer(files: Self.files, { $0.maxAnimationFrames = 5 }) { harness in
                let reply = try await harness.image("frames.gif", [("w", "50"), ("format", "gif")])
                #expect(reply.status == 200)
                let image = try ImageCoderRegistry.default.decode(reply.body)
                #expect(image.frames.count == 5 && image.frameCount == 5)
            }
        }

        @Test func processHasAStepLimit() async throws {
            try await withImageServer(files: Self.files, { $0.maxProcessSteps = 3 }) { harness in
                let four = try await harness.image("logo.png", [("process", "flip:h,flip:v,flip:h,flip:v")])
                ServerErrorTests.expectError(four, 400, "bad_parameter")
                #expect(harness.origin.totalRequests == 0, "refused before the source is fetched")
                #expect(try await harness.image("logo.png", [("process", "flip:h,flip:v,flip:h")]).status == 200)
            }
        }
    }

    /// Hostile requests against a real `webimage serve` process: it keeps serving, its memory stays
    /// small, and a deadline stops the render's CPU, not only the answer.
    @Suite("webimage serve under hostile requests (process)")
    struct HostileServeTests {
        @Test func extremeAspectRatiosAndWideBlursAreServedInLittleMemory() async throws {
            let files = [
                "tall-10k.png": try await HostileImages.strip(width: 1, height: 10_000),
                "tall-100k.png": try await HostileImages.strip(width: 1, height: 100_000),
                "tall-1m.png": try await HostileImages.strip(width: 1, height: 1_000_000),
            ]
            try await withOrigin(files: files) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "120"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                func source(_ name: String) -> String { ServerHarness.encode(origin.imageURL(name).absoluteString) }
                for name in ["tall-10k.png", "tall-100k.png"] {
                    let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source(name))&w=8192&h=1&fit=fill&enlarge=1&format=png", client: client)
                    #expect(status == 200, "\(name): \(String(decoding: body.prefix(200), as: UTF8.self))")
                }
                let pid = serve.process.processIdentifier
                let before = ProcessUsage.cpuSeconds(pid) ?? 0
                let (blurred, _) = try await ServeCommandTests.get("\(base)/img?url=\(source("tall-1m.png"))&process=blur:10000&format=png", client: client)
                #expect(blurred == 200)
                let blurCPU = (ProcessUsage.cpuSeconds(pid) ?? 0) - before
                // (Scaled like every bound: a Thread Sanitizer build took 21.9 s.)
                #expect(blurCPU < 20 * Double(TestTime.scale), "blur:10000 on 1 × 1,000,000 took \(blurCPU) s of CPU (it took 42 s before)")
                let (health, _) = try await ServeCommandTests.get("\(base)/health", client: client)
                #expect(health == 200)
                let (_, metrics) = try await ServeCommandTests.get("\(base)/metrics", client: client)
                let text = String(decoding: metrics, as: UTF8.self)
                for name in ["webimage_memory_budget_limit_bytes", "webimage_memory_budget_in_use_bytes"] {
                    #expect(text.contains(name), "/metrics shows \(name)")
                }
                let peak = ProcessUsage.peakResidentBytes(pid) ?? .max
                #expect(peak < 512 << 20, "peak RSS \(peak >> 20) MB")
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }

        @Test func healthAndCacheHitsAnswerWhileEveryRenderSlotIsBusy() async throws {
            let files = ["big.png": try await HostileImages.gradient(side: 1200), "logo.png": SampleFiles.standard["logo.png"]!]
            try await withOrigin(files: files) { origin in
                // As many heavy renders as cores and render slots: before, they held every thread of
                // the cooperative pool and `/health` went unanswered for a minute.
                let cores = ProcessInfo.processInfo.activeProcessorCount
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "8", "--concurrency", "\(cores)"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                let logo = "\(base)/img?url=\(ServerHarness.encode(origin.imageURL("logo.png").absoluteString))&w=32"
                #expect(try await ServeCommandTests.get(logo, client: client).0 == 200)  // now a result-cache hit
                let heavy = "\(base)/img?url=\(ServerHarness.encode(origin.imageURL("big.png").absoluteString))&process=\(Array(repeating: "blur:25", count: 12).joined(separator: ","))&format=png"
                let renders = (0..<cores).map { _ in Task { try await ServeCommandTests.get(heavy, client: client).0 } }
                #expect(await eventually(timeout: .seconds(30)) { origin.requestCount(path: "/images/big.png") >= 1 })
                try await Task.sleep(for: .milliseconds(500))
                // Renders run five nice levels below the server's own threads, which win the cores.
                // (Counted by nice value too: once in CI a render thread was listed under its
                // creator's name, which the executor now sets itself.)
                let threads = ThreadNiceness.of(process: serve.process.processIdentifier)
                #expect(threads.filter { $0.nice == 5 }.count == cores, "\(threads)")
                #expect(threads.filter { $0.name.hasPrefix("wi-render") }.allSatisfy { $0.nice == 5 }, "\(threads)")
                #expect(threads.filter { $0.name.hasPrefix("NIO-") }.allSatisfy { $0.nice == 0 }, "event loops: \(threads)")
                let clock = ContinuousClock()
                var latencies: [Duration] = []
                for round in 0..<40 {
                    let start = clock.now
                    let status = try await ServeCommandTests.get(round.isMultiple(of: 2) ? "\(base)/health" : logo, client: client).0
                    latencies.append(clock.now - start)
                    #expect(status == 200)
                    try await Task.sleep(for: .milliseconds(50))
                }
                let slowest = latencies.max() ?? .zero
                #expect(slowest < TestTime.scaled(.milliseconds(500)), "slowest /health or cache hit: \(slowest) of \(latencies)")
                // Finished or timed out, each render is answered.
                for render in renders { #expect([200, 504].contains(try await render.value)) }
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }

        @Test func aRenderPastItsDeadlineStopsUsingTheCPU() async throws {
            let files = ["big.png": try await HostileImages.gradient(side: 1200), "logo.png": SampleFiles.standard["logo.png"]!]
            try await withOrigin(files: files) { origin in
                // One render slot and no queue: the next request is admitted only if the timed-out
                // render gave its slot back (else 429).
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "1", "--concurrency", "1", "--queue", "0"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let source = ServerHarness.encode(origin.imageURL("big.png").absoluteString)
                let pid = serve.process.processIdentifier
                // Twelve blurs of 1.44 MP: many seconds of work in any build.
                let chain = Array(repeating: "blur:25", count: 12).joined(separator: ",")
                let clock = ContinuousClock(), start = clock.now
                let (status, body) = try await ServeCommandTests.get("http://127.0.0.1:\(serve.port)/img?url=\(source)&process=\(chain)&format=png", client: client)
                let answered = clock.now - start
                #expect(status == 504, "\(String(decoding: body.prefix(200), as: UTF8.self))")
                #expect(answered < TestTime.scaled(.seconds(5)), "answered after \(answered)")
                // The render stops at its next rows: in the next two seconds the server is idle.
                try await Task.sleep(for: .milliseconds(300))
                let before = ProcessUsage.cpuSeconds(pid) ?? 0
                try await Task.sleep(for: .seconds(2))
                let after = ProcessUsage.cpuSeconds(pid) ?? 0
                #expect(after - before < 0.3, "the server used \(after - before) s of CPU in the 2 s after the 504")
                // The slot came back: the next request is served.
                let logo = ServerHarness.encode(origin.imageURL("logo.png").absoluteString)
                let (small, _) = try await ServeCommandTests.get("http://127.0.0.1:\(serve.port)/img?url=\(logo)&w=20&format=png", client: client)
                #expect(small == 200)
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
