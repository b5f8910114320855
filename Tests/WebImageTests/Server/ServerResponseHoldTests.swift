import AsyncHTTPClient
import Foundation
import Testing
import WebImage

extension ServerTests {
    /// Results that responses are still sending count in the memory budget, once per result, and
    /// a connection that reads nothing holds a slice of it, not a copy (red team, stop 53): 250
    /// unread connections asking for one 6 MB cached result took 1.5 GB (a copy each), and 48
    /// unread 55 MB renders held 1.3 GB over a 1 GB budget.
    @Suite("Image server: response bodies are held in the budget")
    struct ServerResponseHoldTests {
        /// 2000 × 2000 noise: about 7 MB as a JPEG at quality 100.
        static let noise = Result { try JPEGCoder().encode(NoiseImages.make(width: 2000, height: 2000), as: .jpeg, quality: 1) }

        /// `value` of the metric line starting `name ` in a `/metrics` page.
        static func metric(_ name: String, in page: Data) -> Double? {
            String(decoding: page, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name + " ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
        }

        /// Bytes queued in the kernel's send buffers of the sockets whose local port is `port`
        /// (`tx_queue` of `/proc/net/tcp`).
        static func kernelSendQueue(port: Int) -> Int {
            let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
            let local = String(format: ":%04X", port)
            return table.split(separator: "\n").dropFirst().reduce(0) { total, line in
                let fields = line.split(separator: " ")
                guard fields.count > 4, fields[1].hasSuffix(local) else { return total }
                return total + (Int(fields[4].split(separator: ":").first ?? "", radix: 16) ?? 0)
            }
        }

        @Test func manyUnreadConnectionsShareOneCachedResult() async throws {
            let file = try await offPool { try Self.noise.get() }
            try await withOrigin(files: ["noise.jpg": file]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--result-memory-mb", "256"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let pid = serve.process.processIdentifier, base = "http://127.0.0.1:\(serve.port)"
                let path = "/img?url=\(ServerHarness.encode(origin.imageURL("noise.jpg").absoluteString))&format=jpeg&q=100"
                let (status, body) = try await ServeCommandTests.get(base + path, client: .shared)
                try #require(status == 200 && body.count > 5 << 20, "\(status), \(body.count) bytes")
                let before = try #require(ProcessUsage.peakResidentBytes(pid))
                // 150 connections (under the 256 a client may open) ask for the cached result and read nothing.
                let connections = try (0..<150).map { _ in try RawConnection(port: serve.port, receiveBuffer: 4096) }
                for connection in connections { connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n") }
                try await Task.sleep(for: .seconds(3))
                let grown = try #require(ProcessUsage.peakResidentBytes(pid)) - before
                // Before: each held its own copy, the part the kernel had not taken (4–5 MB): over 600 MB.
                #expect(grown < 250 << 20, "serve's peak grew by \(grown >> 20) MB")
                // The kernel holds at most the send buffer a connection (256 KB, doubled by Linux):
                // with its autotuning, 2.6 MB each.
                let queued = Self.kernelSendQueue(port: serve.port)
                #expect(queued < 150 * (600 << 10), "the kernel holds \(queued >> 20) MB for the unread connections")
                let metrics = try await ServeCommandTests.get(base + "/metrics", client: .shared).1
                let held = try #require(Self.metric("webimage_memory_budget_in_use_bytes", in: metrics))
                #expect(held >= Double(body.count) && held < Double(2 * body.count), "the budget counts \(held) bytes for one result of \(body.count)")
                for connection in connections { connection.close() }
                let released = await eventually(timeout: .seconds(10)) {
                    guard let page = try? await ServeCommandTests.get(base + "/metrics", client: .shared).1 else { return false }
                    return Self.metric("webimage_memory_budget_in_use_bytes", in: page) == 0
                }
                #expect(released, "the held result is given back once its connections close")
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }

        /// Distinct results held by clients that do not read fill the budget: a render then
        /// waits for room and is refused after the processing timeout, and `serve` stays near its
        /// budget. A client that reads gets its answer once the others leave.
        @Test func unreadResultsCountAgainstTheBudget() async throws {
            let file = try await offPool { try Self.noise.get() }
            try await withOrigin(files: ["noise.jpg": file]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--memory-budget-mb", "100", "--processing-timeout", "2", "--result-memory-mb", "0"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let pid = serve.process.processIdentifier, base = "http://127.0.0.1:\(serve.port)"
                let source = ServerHarness.encode(origin.imageURL("noise.jpg").absoluteString)
                let before = try #require(ProcessUsage.peakResidentBytes(pid))
                // Twenty clients each ask for a result of its own (quality 81–100, 5–7 MB each) and read
                // only the status line: over 100 MB of results against a 100 MB budget.
                var statuses: [Int] = []
                var connections: [RawConnection] = []
                for index in 0..<20 {
                    let connection = try RawConnection(port: serve.port, source: "127.0.0.\(index + 2)", receiveBuffer: 4096)
                    connections.append(connection)
                    statuses.append(connection.status(after: "GET /img?url=\(source)&format=jpeg&q=\(100 - index) HTTP/1.1\r\nHost: x\r\n\r\n", timeout: .seconds(30)) ?? 0)
                }
                #expect(statuses.filter { $0 == 200 }.count >= 5, "\(statuses)")
                #expect(statuses.contains(503), "\(statuses)")
                let grown = try #require(ProcessUsage.peakResidentBytes(pid)) - before
                #expect(grown < 400 << 20, "serve's peak grew by \(grown >> 20) MB")
                for connection in connections { connection.close() }
                let answered = await eventually(timeout: .seconds(10)) {
                    (try? await ServeCommandTests.get("\(base)/img?url=\(source)&format=jpeg&q=50", client: .shared).0) == 200
                }
                #expect(answered, "a render gets room once the unread results are gone")
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }
    }
}
