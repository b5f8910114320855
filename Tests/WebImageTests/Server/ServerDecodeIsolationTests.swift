import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// `serve` decodes large AVIF, HEIF and JPEG XL images in a worker process that a passed
    /// deadline kills (issue 25, "Deadlines stop the work"): libheif has no way to stop a decode,
    /// so before this a 230 KB HEIC kept a core busy for the whole decode after the 504.
    @Suite("Image server: isolated decodes")
    struct ServerDecodeIsolationTests {
        /// The pids of `pid`'s live children (`/proc/PID/task/*/children`).
        static func children(of pid: Int32) -> [Int32] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.flatMap { task -> [Int32] in
                let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
                return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
        }

        /// CPU seconds of `pid` and of its children it has reaped (`cutime` and `cstime`): a
        /// worker's CPU counts once the server has waited for it.
        static func cpuSecondsWithChildren(_ pid: Int32) -> Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 15 else { return 0 }
            let ticks = (11...14).compactMap { Double(fields[$0]) }.reduce(0, +)
            return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        @Test func aHEIFDecodePastItsDeadlineStopsUsingTheCPU() async throws {
            let files = ["slow.heic": try CodecFixtures.data("heic-slow-6000.heic"), "logo.png": SampleFiles.standard["logo.png"]!]
            try await withOrigin(files: files) { origin in
                // One render slot and no queue: the next request is admitted only if the timed-out
                // render gave its slot back. The decode alone takes over a second.
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "0.3", "--concurrency", "1", "--queue", "0"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                let pid = serve.process.processIdentifier
                let source = ServerHarness.encode(origin.imageURL("slow.heic").absoluteString)
                let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source)&w=100&format=png", client: client)
                #expect(status == 504, "\(String(decoding: body.prefix(200), as: UTF8.self))")
                // The worker is killed and reaped: only the spare started for the next decode is
                // left, waiting. The server, its reaped children and the spare use next to no CPU
                // in the next two seconds.
                try await Task.sleep(for: .milliseconds(200))
                let left = Self.children(of: pid)
                #expect(left.count <= 1, "children left: \(left)")
                func cpu() -> Double { Self.cpuSecondsWithChildren(pid) + left.compactMap(ProcessUsage.cpuSeconds).reduce(0, +) }
                let before = cpu()
                try await Task.sleep(for: .seconds(2))
                let after = cpu()
                #expect(after - before < 0.3, "the server and its workers used \(after - before) s of CPU in the 2 s after the 504")
                // The slot came back; /metrics counts the cancelled decode.
                let logo = ServerHarness.encode(origin.imageURL("logo.png").absoluteString)
                #expect(try await ServeCommandTests.get("\(base)/img?url=\(logo)&w=20&format=png", client: client).0 == 200)
                let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: client).1, as: UTF8.self)
                #expect(metrics.contains(#"webimage_isolated_decodes_total{outcome="cancelled"} 1"#), "\(metrics.split(separator: "\n").filter { $0.contains("isolated") })")
                let spares = Self.children(of: pid)
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                // A spare reads the end of its input when the server is gone, and exits.
                let deadline = ContinuousClock.now + .seconds(5)
                while spares.contains(where: { kill($0, 0) == 0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                #expect(!spares.contains { kill($0, 0) == 0 }, "spares left after the server: \(spares)")
                try await client.shutdown()
            }
        }

        /// 1800 × 1200 = 2.16 MP: over the 2 MP from which decodes go to a worker.
        static let largeAVIF = Result { try AVIFCoder().encode(SampleImages.pattern(width: 1800, height: 1200, seed: 3), as: .avif, quality: 0.6) }

        /// The worker holds the decoded pixels too until they have arrived: the price counts them twice.
        @Test func aWorkersCopyOfThePixelsIsPriced() async throws {
            let files = ["large.avif": try Self.largeAVIF.get()]
            let isolated = ImageCoderRegistry.default.isolatingDecodes(
                DecodeIsolation(worker: .init(executable: WebImageCommand.executable.path, arguments: ["decode-worker"])))
            // 8.6 MB decoded (about 16 MB for the whole render): inside a 20 MB budget once, not twice.
            for (coders, expected) in [(ImageCoderRegistry.default, 200), (isolated, 422)] {
                try await withImageServer(files: files, { $0.memoryBudgetBytes = 20 << 20; $0.coders = coders }) { harness in
                    let reply = try await harness.image("large.avif", [("w", "90"), ("format", "png")])
                    #expect(reply.status == expected, "\(String(decoding: reply.body.prefix(200), as: UTF8.self))")
                    if expected == 422 { #expect(reply.json?["message"]?.contains("memory budget") == true, "\(reply.json ?? [:])") }
                }
            }
        }

        @Test func aLargeAVIFIsRenderedThroughItsWorker() async throws {
            let avif = try Self.largeAVIF.get()
            try await withOrigin(files: ["large.avif": avif]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                let source = ServerHarness.encode(origin.imageURL("large.avif").absoluteString)
                let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source)&w=90&format=png", client: client)
                #expect(status == 200)
                let image = try PNGCoder().decode(body, options: .default)
                #expect(image.pixelWidth == 90 && image.pixelHeight == 60)
                // The same render decoded in this process.
                let here = try ImageCoderRegistry.default.decode(avif).processed(by: [ImageProcessors.Resize(width: 90, height: 60)])
                let differing = zip(image.pixels, here.pixels).filter { abs(Int($0) - Int($1)) > 2 }.count
                #expect(differing == 0, "\(differing) channel values differ from the in-process render")
                let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: client).1, as: UTF8.self)
                #expect(metrics.contains(#"webimage_isolated_decodes_total{outcome="decoded"} 1"#), "\(metrics.split(separator: "\n").filter { $0.contains("isolated") })")
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
