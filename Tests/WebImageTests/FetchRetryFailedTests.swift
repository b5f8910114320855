import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `--retry-failed RUN.jsonl` and the final URL of redirects, through a real `webimage fetch`
/// child against the loopback origin.
@Suite("webimage fetch --retry-failed and redirects")
struct FetchRetryFailedTests {
    struct Row: Decodable { var line: Int; var url: String; var status: String; var finalURL: String? }

    static func rows(_ file: URL) throws -> [Row] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Row.self, from: Data($0.utf8)) }.sorted { $0.line < $1.line }
    }

    @Test func onlyFailedLinesAreFetchedAgainAndRedirectsAreRecorded() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let first = dir.appendingPathComponent("first.jsonl"), second = dir.appendingPathComponent("second.jsonl")
            let list = [
                origin.imageURL("small.jpg").absoluteString,
                origin.imageURL("missing.jpg", query: "status=404").absoluteString,
                origin.url("/flaky/small.jpg?fails=1&failStatus=500").absoluteString,  // fails once, then serves
                "not a url",
                origin.url("/redirect/2/logo.png").absoluteString,
            ].joined(separator: "\n")
            let common = ["fetch", "--output", dir.appendingPathComponent("out").path, "--no-cache", "--retries", "0", "--concurrency", "1"]
            let run = try await WebImageCommand.run(common + ["--input", "-", "--jsonl", first.path], stdin: list)
            #expect(run.status == 3)
            let before = try Self.rows(first)
            #expect(before.map(\.status) == ["ok", "failed", "failed", "invalid", "ok"], "\(before)")
            #expect(before[4].finalURL == origin.imageURL("logo.png").absoluteString, "the redirect's end: \(before[4])")
            #expect(before[0].finalURL == nil, "no redirect, no finalURL")

            // Hostile lines in the earlier run's file are skipped: one past 512 KB, one no JSON.
            let handle = try FileHandle(forWritingTo: first)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(("{\"line\":9,\"status\":\"failed\",\"url\":\"" + String(repeating: "a", count: 600_000) + "\"}\nnot json\n").utf8))
            try handle.close()

            origin.resetCounts()
            let retried = try await WebImageCommand.run(common + ["--retry-failed", first.path, "--jsonl", second.path])
            #expect(retried.status == 3, "the 404 fails again: \(retried.stdout)")
            let after = try Self.rows(second)
            #expect(after.map(\.line) == [2, 3], "the failed lines, with their numbers: \(after)")
            #expect(after.map(\.status) == ["failed", "ok"], "\(after)")
            #expect(origin.contentRequests.map(\.path).sorted() == ["/flaky/small.jpg", "/images/missing.jpg"])

            let clobber = try await WebImageCommand.run(common + ["--retry-failed", first.path, "--jsonl", first.path])
            #expect(clobber.status == 64, "\(clobber.stderr)")
            let mixed = try await WebImageCommand.run(common + ["--retry-failed", first.path, origin.imageURL("small.jpg").absoluteString])
            #expect(mixed.status == 64, "\(mixed.stderr)")
        }
    }
}
