import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// When memory runs out, the kernel's out-of-memory killer sends `SIGKILL` to the process it
    /// chooses; decode workers ask to be chosen first (`oom_score_adj` 1000). The server then
    /// answers that one render `503 worker_killed`, which no cache keeps and nothing remembers
    /// against the source, and goes on serving (issue 25). The signal is sent here by the test,
    /// to a worker holding a decode; `scripts/measure/measure-oom-kill` shows the same with the
    /// real out-of-memory killer in a memory cgroup.
    @Suite("Image server: a decode worker killed from outside")
    struct ServerWorkerKilledTests {
        /// `pid`'s children running `decode-worker`.
        static func workers(of pid: Int32) -> [Int32] {
            ServerDecodeIsolationTests.children(of: pid).filter { child in
                let command = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(child)/cmdline"))) ?? Data()
                return String(decoding: command, as: UTF8.self).contains("decode-worker")
            }
        }

        @Test func aKilledWorkerIsA503ThatNoCacheKeepsAndTheNextRenderSucceeds() async throws {
            let files = ["large.avif": try ServerDecodeIsolationTests.largeAVIF.get()]
            try await withOrigin(files: files) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--processing-timeout", "120"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                let pid = serve.process.processIdentifier
                // A spare worker is started with the server, before any request needs one.
                #expect(await eventually(timeout: .seconds(20)) { Self.workers(of: pid).count == 1 }, "no spare worker after the start")
                let spare = try #require(Self.workers(of: pid).first)
                // The spare is stopped, so the 2.16 MP AVIF's decode it is given waits in it; once
                // the source has been fetched and handed over, the spare is killed, as the
                // out-of-memory killer would.
                kill(spare, SIGSTOP)
                let url = "\(base)/img?url=\(ServerHarness.encode(origin.imageURL("large.avif").absoluteString))&w=100&format=png"
                let render = Task { () throws -> HTTPClientResponse in
                    try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
                }
                #expect(await eventually { origin.requestCount(path: "/images/large.avif") == 1 })
                try await Task.sleep(for: TestTime.scaled(.milliseconds(500)))
                kill(spare, SIGKILL)
                let response = try await render.value
                let body = Data(buffer: try await response.body.collect(upTo: 1 << 20))
                #expect(response.status.code == 503, "\(String(decoding: body.prefix(300), as: UTF8.self))")
                let error = try JSONDecoder().decode([String: String].self, from: body)
                #expect(error["error"] == "worker_killed")
                #expect(response.headers.first(name: "cache-control") == "no-store")
                #expect(response.headers.first(name: "retry-after") == "1")
                // Nothing remembers it: the same URL renders now, through a new worker.
                let (status, image) = try await ServeCommandTests.get(url, client: client)
                #expect(status == 200, "\(String(decoding: image.prefix(300), as: UTF8.self))")
                #expect(try ImageCoderRegistry.default.readHeader(image).pixelWidth == 100)
                let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: client).1, as: UTF8.self)
                let isolated = metrics.split(separator: "\n").filter { $0.hasPrefix("webimage_isolated_decodes_total") }
                #expect(isolated.contains(#"webimage_isolated_decodes_total{outcome="killed"} 1"#), "\(isolated)")
                #expect(isolated.contains(#"webimage_isolated_decodes_total{outcome="decoded"} 1"#), "\(isolated)")
                #expect(origin.requestCount(path: "/images/large.avif") <= 2)
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
