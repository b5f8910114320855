import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// Issue #26, connections: slow and idle clients against a real `webimage serve` process.
    /// Raw sockets on 127.0.0.0/8 only; a few hundred at most, each test bounded in time.
    @Suite("webimage serve connection guards (process)")
    struct ConnectionGuardTests {
        typealias Serve = ServeCommandTests.ServeProcess
        static let health = "GET /health HTTP/1.1\r\nHost: test\r\n\r\n"

        static func stop(_ serve: Serve) async {
            kill(serve.process.processIdentifier, SIGTERM)
            let (status, log) = await serve.waitForExit()
            #expect(status == 0, "\(log)")
        }

        @Test func aSlowlorisIsClosedAfterTheHeadTimeoutEvenOnAKeptAliveConnection() async throws {
            let serve = try await Serve(["--head-timeout", "1", "--idle-timeout", "60"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
            let port = serve.port
            for keptAlive in [false, true] {
                // Half a request line, then one byte every 200 ms: never idle, never a whole head.
                let (held, alive) = try await offPool { () throws -> (Duration?, Bool) in
                    let connection = try RawConnection(port: port)
                    let alive = keptAlive ? connection.status(after: Self.health) == 200 : true
                    let clock = ContinuousClock(), start = clock.now
                    connection.send("GET /health?pad=")
                    while clock.now - start < .seconds(20) {
                        if !connection.send("a") || connection.read(timeout: .milliseconds(200)) == .closed { return (clock.now - start, alive) }
                    }
                    return (nil, alive)
                }
                #expect(alive, "the first request on the connection was answered")
                let closedAfter = try #require(held, "a slowloris kept its connection for 20 s (kept alive: \(keptAlive))")
                #expect(closedAfter >= .milliseconds(900), "closed at \(closedAfter), before the head timeout")
                #expect(closedAfter < .seconds(1) + TestTime.scaled(.seconds(3)), "closed at \(closedAfter) (kept alive: \(keptAlive))")
            }
            let fresh = try await offPool { try RawConnection(port: port).status(after: Self.health) }
            #expect(fresh == 200, "still serving")
            await Self.stop(serve)
        }

        @Test func anIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
            let serve = try await Serve(["--idle-timeout", "1", "--head-timeout", "30"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
            let port = serve.port
            let (first, second, closedAfter) = try await offPool { () throws -> (Int?, Int?, Duration?) in
                let connection = try RawConnection(port: port)
                let first = connection.status(after: Self.health)
                // Quiet for half the idle timeout: kept alive, and answered again.
                Thread.sleep(forTimeInterval: 0.5)
                let second = connection.status(after: Self.health)
                return (first, second, connection.timeUntilClosed(limit: .seconds(20)))
            }
            #expect(first == 200 && second == 200)
            let closed = try #require(closedAfter, "an idle connection stayed open for 20 s")
            #expect(closed >= .milliseconds(900) && closed < .seconds(1) + TestTime.scaled(.seconds(3)), "closed after \(closed)")
            await Self.stop(serve)
        }

        @Test func aRequestOverTheRequestTimeoutHasItsConnectionClosed() async throws {
            try await withOrigin { origin in
                let serve = try await Serve(
                    ["--allow-private-networks", "--fetch-timeout", "30", "--request-timeout", "1"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let port = serve.port
                let source = ServerHarness.encode(origin.imageURL("photo.jpg", query: "delay=4000").absoluteString)
                let (status, elapsed) = try await offPool { () throws -> (Int?, Duration) in
                    let clock = ContinuousClock(), start = clock.now
                    let status = try RawConnection(port: port).status(after: "GET /img?url=\(source)&w=20 HTTP/1.1\r\nHost: t\r\n\r\n")
                    return (status, clock.now - start)
                }
                #expect(status == nil, "a source slower than the request timeout: closed, not answered")
                #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(1) + TestTime.scaled(.seconds(2)), "closed after \(elapsed)")
                #expect(try await offPool { try RawConnection(port: port).status(after: Self.health) } == 200)
                await Self.stop(serve)
            }
        }

        @Test func healthAnswersWhileOneClientHoldsEveryConnectionItMayUnderALowDescriptorLimit() async throws {
            try await withOrigin { origin in
                // 400 descriptors: 100 kept free, so at most 300 connections, 256 of them per client.
                let serve = try await Serve(
                    ["--allow-private-networks", "--head-timeout", "60"], environment: ["WEBIMAGE_LOG_LEVEL": "error"], openFiles: 400)
                let port = serve.port, pid = serve.process.processIdentifier
                // The attacker (127.0.0.2) opens 300 connections and sends nothing.
                let attack = try await offPool { try (0..<300).map { _ in try RawConnection(port: port, source: "127.0.0.2") } }
                func closed() async -> Int { await offPool { attack.filter { $0.read(timeout: .zero) == .closed }.count } }
                #expect(await eventually(timeout: .seconds(10)) { await closed() >= 44 })
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(port)"
                for _ in 0..<5 { #expect(try await ServeCommandTests.get("\(base)/health", client: client).0 == 200) }
                // The headroom leaves descriptors for the origin: an image is still fetched and served.
                let source = ServerHarness.encode(origin.imageURL("photo.jpg").absoluteString)
                #expect(try await ServeCommandTests.get("\(base)/img?url=\(source)&w=20", client: client).0 == 200)
                let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
                #expect(descriptors < 400 - 32, "\(descriptors) descriptors open")
                let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: client).1, as: UTF8.self)
                #expect(metrics.contains("webimage_server_connections_refused_total{reason=\"per_client\"} 44"), "\(metrics.prefix(3000))")
                #expect(await closed() == 44, "only the connections over the per-client cap were closed")
                attack.forEach { $0.close() }
                try await client.shutdown()
                await Self.stop(serve)
            }
        }

        @Test func aFullServerRefusesAtAcceptAndRecoversWhenTheHeadTimeoutEndsTheFlood() async throws {
            let serve = try await Serve(["--max-connections", "30", "--head-timeout", "2"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
            let port = serve.port
            let clock = ContinuousClock(), start = clock.now
            let flood = try await offPool { try (0..<30).map { _ in try RawConnection(port: port, source: "127.0.0.3") } }
            // The 31st connection, whoever opens it, is closed at once without an answer.
            let extra = try await offPool { try RawConnection(port: port).status(after: Self.health, timeout: .seconds(1)) }
            #expect(extra == nil || clock.now - start >= .seconds(2), "answered \(extra ?? 0) while the server was full")
            // The flood sent no request: its connections end at the head timeout and /health answers.
            #expect(await eventually(timeout: .seconds(15)) { (try? await offPool { try RawConnection(port: port).status(after: Self.health) }) == 200 })
            #expect(clock.now - start < .seconds(2) + TestTime.scaled(.seconds(5)))
            flood.forEach { $0.close() }
            await Self.stop(serve)
        }

        @Test func oversizedHeadsAre431AndTheServerKeepsServing() async throws {
            let serve = try await Serve(["--max-header-bytes", "8192", "--max-headers", "20"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
            let port = serve.port
            let (tooMany, tooLarge, fits, after) = try await offPool { () throws -> (Int?, Int?, Int?, Int?) in
                let manyHeaders = (0..<21).map { "X-\($0): 1\r\n" }.joined()
                let bigHeader = "X-Big: " + String(repeating: "a", count: 9000) + "\r\n"
                return (
                    try RawConnection(port: port).status(after: "GET /health HTTP/1.1\r\nHost: t\r\n\(manyHeaders)\r\n"),
                    try RawConnection(port: port).status(after: "GET /health HTTP/1.1\r\nHost: t\r\n\(bigHeader)\r\n"),
                    try RawConnection(port: port).status(after: "GET /health HTTP/1.1\r\nHost: t\r\n" + (0..<18).map { "X-\($0): 1\r\n" }.joined() + "\r\n"),
                    try RawConnection(port: port).status(after: Self.health))
            }
            #expect(tooMany == 431 && tooLarge == 431, "\(String(describing: tooMany)) \(String(describing: tooLarge))")
            #expect(fits == 200 && after == 200)
            await Self.stop(serve)
        }

        @Test func unusableConnectionLimitsAreUsageErrors() async throws {
            for (arguments, message) in [
                (["--max-connections", "99999999999"], "the connection limit must be from 1 to"),
                (["--head-timeout", "1e300"], "is not a number of seconds"),
                (["--idle-timeout", "0"], "must be more than 0 seconds"),
                (["--max-headers", "0"], "the header count limit"),
                (["--max-header-bytes", "9223372036854775807"], "the header size limit"),
                (["--max-connections-per-client", "0"], "the per-client connection limit"),
                (["--send-buffer-kb", "70000"], "the send buffer must be from 0"),
                (["--send-buffer-kb=-1"], "the send buffer must be from 0"),
            ] {
                let result = try await WebImageCommand.run(["serve", "--port", "0"] + arguments)
                #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
            }
        }
    }
}
