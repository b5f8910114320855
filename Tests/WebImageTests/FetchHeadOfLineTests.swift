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
            let result = try await WebImageCommand.run(
                ["fetch", "--input", "-", "--output", out.path, "--no-cache", "--retries", "0", "--per-host", "1", "--concurrency", "3"],
                stdin: (slow + fast).joined(separator: "\n"))
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("11 succeeded"), "\(result.stdout)")
            // The slow host's loads run one at a time (6 s each: room for a loaded machine); every fast one arrives before
            // the slow host's second, where the three slow loads used to hold all three slots.
            let requests = origin.contentRequests
            let slowArrivals = requests.filter { $0.query?.contains("slow=") == true }.map(\.arrivedAt).sorted()
            let fastArrivals = requests.filter { $0.query?.contains("fast=") == true }.map(\.arrivedAt)
            #expect(slowArrivals.count == 3 && fastArrivals.count == 8)
            #expect(fastArrivals.allSatisfy { $0 < slowArrivals[1] }, "fast loads waited behind the slow host")
            #expect(origin.maxConcurrentRequests <= 2, "one per host")
        }
    }
}
