import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// The source's header is read after its fetch and before the render, holding a render slot:
    /// a GIF of three million one-pixel frames (69 MB) walks for seconds there. Before, that walk
    /// answered to no deadline and no departure (red team, stop 50: a slot held for seconds after
    /// the client left). Now the fetch and the header read run under the fetch and processing
    /// timeouts together, and stop when the client leaves.
    @Suite("Image server: the header read stops at the deadline and at a departure")
    struct ServerHeaderReadTests {
        static let frames = HeavyTests.HeaderWalkCostTests.manyFrameGIF(3_000_000)

        @Test func aHeaderReadWhoseClientLeftStops() async throws {
            try await Self.withServer(["--fetch-timeout", "60", "--processing-timeout", "60"]) { serve, base, source in
                let pid = serve.process.processIdentifier
                let start = ServerDecodeIsolationTests.cpuSecondsWithChildren(pid)
                let connection = try RawConnection(port: serve.port)
                connection.send("GET /img?url=\(source)&w=10 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                // Leave once the walk is well under way (the fetch itself takes a fraction of this).
                #expect(await eventually(timeout: .seconds(20)) {
                    ServerDecodeIsolationTests.cpuSecondsWithChildren(pid) - start > 1.0
                }, "the fetch and walk never started")
                connection.close()
                let spent = try await ServerDisconnectTests.cpuInTwoSeconds(of: pid)
                #expect(spent < 0.3, "\(spent) s of CPU in the 2 s after the client left")
                try await ServerDisconnectTests.expectLeftCount(1, base: base)
            }
        }

        @Test func aHeaderReadPastTheDeadlineStops() async throws {
            // Fetch and header together get 2.5 s; the walk alone takes about 4 s in a debug build.
            try await Self.withServer(["--fetch-timeout", "2", "--processing-timeout", "0.5"]) { serve, base, source in
                let pid = serve.process.processIdentifier
                let clock = ContinuousClock(), start = clock.now
                let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source)&w=10", client: .shared)
                let waited = clock.now - start
                #expect(status == 504, "\(String(decoding: body.prefix(200), as: UTF8.self))")
                #expect(waited < .seconds(3.5), "answered after \(waited): the deadline did not cover the header read")
                let spent = try await ServerDisconnectTests.cpuInTwoSeconds(of: pid)
                #expect(spent < 0.3, "\(spent) s of CPU in the 2 s after the 504")
            }
        }

        /// A `serve` with one render slot, no queue and `flags`, the GIF's encoded source URL, and
        /// afterwards: the slot is back (a small render succeeds at once).
        static func withServer(
            _ flags: [String], _ body: (ServeCommandTests.ServeProcess, String, String) async throws -> Void
        ) async throws {
            try await withOrigin(files: ["frames.gif": frames, "small.jpg": SampleFiles.standard["small.jpg"]!]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--max-source-bytes", "100000000", "--concurrency", "1", "--queue", "0"] + flags,
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let base = "http://127.0.0.1:\(serve.port)"
                try await body(serve, base, ServerHarness.encode(origin.imageURL("frames.gif").absoluteString))
                let small = ServerHarness.encode(origin.imageURL("small.jpg").absoluteString)
                #expect(try await ServeCommandTests.get("\(base)/img?url=\(small)&w=64", client: .shared).0 == 200, "the slot was not given back")
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }
    }
}
