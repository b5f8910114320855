import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `--per-host` without head-of-line blocking: a slow host's loads wait parked, not in the run's
/// `--concurrency` slots, so other hosts keep loading. Two hosts on the one loopback origin:
/// `127.0.0.1` (every request takes 6 s) and `localhost` (fast).
@Suite("webimage fetch: a slow host does not block the others")
struct FetchHeadOfLineTests {
    @Test func fastHostIsNotHeldBehindASlowOne() async throws {
        try await withOrigin { origin in
            let out = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: out) }
            let slow = (1...3).map { origin.imageURL("small.jpg", query: "delay=6000&slow=\($0)").absoluteString }
            let fast = (1...8).map { "http://localhost:\(origin.port)/images/logo.png?fast=\($0)" }
            let jsonl = out.appendingPathComponent("run.jsonl")
            let result = try await WebImageCommand.run(
                ["fetch", "--input", "-", "--output", out.path, "--no-cache", "--retries", "0", "--per-host", "1", "--concurrency", "3",
                 "--jsonl", jsonl.path, "--timeout", "60"],  // the 6 s answers outlasted 15 s beside a build
                stdin: (slow + fast).joined(separator: "\n"))
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("11 succeeded"), "\(result.stdout)")
            // The slow host's loads run one at a time (6 s each: room for a loaded machine), and the
            // three used to hold all three slots, so no fast load could start before the first ended.
            // By the child's own clock (`at`: when each line ended), not the in-process origin's
            // arrival log, which bunches arrivals when the suite keeps its event loop waiting.
            struct Record: Decodable { var url: String; var at: Double? }
            let records = try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n")
                .map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
            let slowEnds = records.filter { $0.url.contains("slow=") }.map { $0.at ?? 0 }
            let fastEnds = records.filter { $0.url.contains("fast=") }.map { $0.at ?? 0 }
            #expect(slowEnds.count == 3 && fastEnds.count == 8)
            // Fast loads end while the first slow one (6 s) still runs: they did not wait for its
            // slot. (How many depends on the machine: each took over a second in a loaded CI run.)
            let first = slowEnds.min() ?? 0
            #expect(fastEnds.contains { $0 < first }, "fast loads waited behind the slow host: fast \(fastEnds), slow \(slowEnds)")
            #expect(origin.maxConcurrentRequests <= 2, "one per host")
        }
    }
}
