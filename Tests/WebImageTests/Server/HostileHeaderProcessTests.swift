import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// The two reproductions of issue #26 through real processes: `webimage fetch` against an
    /// origin that answers `503` with `Retry-After: 1e300`, and `fetch` and `serve` resuming a
    /// download that the origin answers `206` with a range and a length near 2^63.
    @Suite("Hostile header values through webimage fetch and serve (processes)")
    struct HostileHeaderProcessTests {
        static let nearTwoToThe63 = HeaderValueTests.query([
            "Content-Range:bytes 100-9223372036854775806/9223372036854775807", "Content-Length:9223372036854775707",
        ])

        /// The exit status of a `fetch` that did not crash: 0 (fetched) or 3 (the line failed, reported).
        static func expectNoCrash(_ result: CommandResult, _ expected: Int32, _ what: String) {
            #expect(result.status == expected, "\(what): status \(result.status), stderr \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Crash"), "\(what): \(result.stderr)")
        }

        @Test func fetchRetriesA503WithRetryAfter1e300() async throws {
            try await withOrigin { origin in
                let output = temporaryDirectory()
                let url = origin.url("/flaky/small.jpg?fails=1&failStatus=503&retryAfter=1e300").absoluteString
                let result = try await WebImageCommand.run(["fetch", url, "--output", output.path, "--no-cache", "--retries", "1"])
                Self.expectNoCrash(result, 0, "Retry-After: 1e300 is ignored, the backoff applies")
                #expect(origin.contentRequests.map(\.status) == [503, 200])
                let written = try FileManager.default.contentsOfDirectory(atPath: output.path)
                let images = try written.map { try Data(contentsOf: output.appendingPathComponent($0)) }
                #expect(images.contains(SampleFiles.standard["small.jpg"]!), "the image was written: \(written)")
            }
        }

        @Test func fetchRefusesAResumedRangeNearTwoToThe63() async throws {
            try await withOrigin { origin in
                let url = origin.url("/resume/small.jpg?cut=100&" + Self.nearTwoToThe63).absoluteString
                let result = try await WebImageCommand.run(["fetch", url, "--output", temporaryDirectory().path, "--no-cache", "--retries", "1"])
                Self.expectNoCrash(result, 3, "the 206 is refused")
                #expect(origin.contentRequests.map(\.status) == [200, 206], "a cut transfer, then the resume")
                #expect((result.stdout + result.stderr).contains("Content-Range"), "the failure names the header: \(result.stdout) \(result.stderr)")
            }
        }

        @Test func serveAnswersTheResumedRangeNearTwoToThe63AndKeepsServing() async throws {
            try await withOrigin { origin in
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let serve = try await ServeCommandTests.ServeProcess(["--allow-private-networks"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let source = ServerHarness.encode(origin.url("/resume/small.jpg?cut=100&" + Self.nearTwoToThe63).absoluteString)
                let base = "http://127.0.0.1:\(serve.port)"
                let first = try await ServeCommandTests.get("\(base)/img?url=\(source)&w=20", client: client)
                #expect(first.0 == 502, "the cut transfer")
                let second = try await ServeCommandTests.get("\(base)/img?url=\(source)&w=20", client: client)
                #expect(second.0 == 502, "the resumed 206 is refused")
                #expect(String(decoding: second.1, as: UTF8.self).contains("invalid Content-Range header"))
                #expect(origin.requests.map(\.status) == [200, 206])
                let health = try await ServeCommandTests.get("\(base)/health", client: client)
                #expect(health.0 == 200, "still serving")
                let image = try await ServeCommandTests.get("\(base)/img?url=\(ServerHarness.encode(origin.imageURL("small.jpg").absoluteString))&w=20", client: client)
                #expect(image.0 == 200)
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0, "a clean exit, not a crash")
                try await client.shutdown()
            }
        }
    }
}
