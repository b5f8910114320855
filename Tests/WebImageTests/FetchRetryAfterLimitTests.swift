import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `fetch --max-retry-after`: a host is waited for as long as its `Retry-After` asks, up to the
/// limit (default 300 s); a host that asks for longer gets no further request in the run and its
/// lines are recorded failed with the reason. Real `webimage fetch` children against two real
/// loopback origins (127.0.0.1 serves, 127.0.0.2 answers 429), counting the requests each got.
@Suite("webimage fetch honours long Retry-After")
struct FetchRetryAfterLimitTests {
    struct Record: Decodable { var line: Int; var url: String; var status: String; var error: String?; var at: Double? }

    static func records(_ file: URL) throws -> [Record] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }.sorted { $0.line < $1.line }
    }

    static func fetch(_ urls: [URL], _ extra: [String]) async throws -> (CommandResult, [Record], Double) {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let jsonl = dir.appendingPathComponent("run.jsonl")
        let clock = ContinuousClock(), start = clock.now
        let result = try await WebImageCommand.run(
            ["fetch", "--input", "-", "--output", dir.appendingPathComponent("out").path, "--no-cache", "--jsonl", jsonl.path] + extra,
            stdin: urls.map(\.absoluteString).joined(separator: "\n"))
        return (result, (try? records(jsonl)) ?? [], (clock.now - start).seconds)
    }

    /// A host asking for an hour: one request per URL at most (the retries, two by default, are
    /// not sent), its later lines not requested at all; the other host is fetched whole, and the
    /// run ends promptly with exit status 3.
    @Test(.timeLimit(.minutes(3)))
    func aHostAskingForAnHourIsNotAskedAgainInTheRun() async throws {
        try await withOrigin { origin in
            let busy = try await ImageOrigin.start(files: SampleFiles.standard, address: "127.0.0.2")
            do {
                let header = "Retry-After:3600".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let refused = (1...4).map { busy.url("/answer/small.jpg?status=429&header=\(header)&copy=\($0)") }
                let served = (1...6).map { origin.imageURL("small.jpg", query: "copy=\($0)") }
                // Interleaved: the busy host's later lines come after its first 429.
                let urls = [served[0], refused[0], served[1], refused[1], served[2], served[3], refused[2], served[4], refused[3], served[5]]
                let (result, records, seconds) = try await Self.fetch(urls, ["--concurrency", "2"])
                #expect(result.status == 3, "lines failed: \(result.stdout) \(result.stderr)")
                #expect(seconds < 20, "the run waited \(seconds) s for the busy host")
                #expect(records.count == 10, "\(records)")
                for record in records where record.url.contains("127.0.0.1") {
                    #expect(record.status == "ok", "\(record)")
                }
                let busyRecords = records.filter { $0.url.contains("127.0.0.2") }
                #expect(busyRecords.count == 4)
                for record in busyRecords {
                    #expect(record.status == "failed", "\(record)")
                    #expect(record.error?.contains("127.0.0.2 asked (Retry-After) for no request in the next 3600 s, longer than --max-retry-after 300 s") == true,
                            "\(String(describing: record.error))")
                }
                #expect(busyRecords.contains { $0.error?.hasPrefix("not requested: ") == true }, "later lines are not requested: \(busyRecords)")
                let asked = busy.requests.filter { $0.path == "/answer/small.jpg" }
                let perURL = Dictionary(grouping: asked, by: { $0.query ?? "" }).mapValues(\.count)
                #expect(perURL.values.allSatisfy { $0 == 1 }, "one request per URL at most: \(perURL)")
                #expect(asked.count < 4, "lines after the 429 are not requested: \(perURL)")
                #expect(origin.requests.filter { $0.path == "/images/small.jpg" }.count == 6)
                await busy.stop()
            } catch {
                await busy.stop()
                throw error
            }
        }
    }

    /// A Retry-After within the limit still pauses the host for as long as it asks, and the
    /// retry then succeeds; a limit below it refuses the host; the limit is checked.
    @Test(.timeLimit(.minutes(2)))
    func aShortRetryAfterPausesThenSucceeds() async throws {
        try await withOrigin { origin in
            let flaky = origin.url("/flaky/small.jpg?fails=1&failStatus=429&retryAfter=2")
            let (result, records, _) = try await Self.fetch([flaky, origin.imageURL("logo.png")], ["--concurrency", "1"])
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(records.map(\.status) == ["ok", "ok"], "\(records)")
            let tries = origin.requests.filter { $0.path == "/flaky/small.jpg" }
            #expect(tries.count == 2)
            // By the child's clock: the retry cannot end before the 2 s it was asked to wait.
            #expect((records.first?.at ?? 0) >= 1.5, "\(records)")

            origin.resetCounts()
            let again = origin.url("/flaky/small.jpg?fails=1&failStatus=429&retryAfter=2&copy=2")
            let (limited, limitedRecords, _) = try await Self.fetch([again], ["--max-retry-after", "1"])
            #expect(limited.status == 3, "\(limited.stdout) \(limited.stderr)")
            #expect(limitedRecords.first?.error?.contains("longer than --max-retry-after 1 s") == true, "\(limitedRecords)")
            #expect(origin.requests.filter { $0.path == "/flaky/small.jpg" }.count == 1)

            for bad in ["-1", "nan", "86401"] {
                let (refused, _, _) = try await Self.fetch([again], ["--max-retry-after", bad])
                #expect(refused.status == 64, "\(bad): \(refused.stderr)")
            }
        }
    }

    /// `--retries N` bounds a line's requests in all, at `1 + N`, whatever mix of failures its host
    /// answers: the downloader's retries (a `503` without `Retry-After`) and the run's own (a
    /// `429` with `Retry-After` parks the line, then sends it again) draw from one budget. A host
    /// that alternated the two got (1 + N)² requests for one line (9 at the default).
    @Test(.timeLimit(.minutes(2)))
    func aLineIsRequestedAtMostOncePlusItsRetries() async throws {
        try await withOrigin { origin in
            let alternating = Array(repeating: "503,429", count: 6).joined(separator: ",")
            for retries in [2, 0, 4] {
                origin.resetCounts()
                let url = origin.url("/flaky/small.jpg?statuses=\(alternating)&retryAfter=1&retries=\(retries)")
                let (result, records, _) = try await Self.fetch([url], ["--retries", "\(retries)"])
                #expect(result.status == 3, "the line fails: \(result.stdout) \(result.stderr)")
                #expect(records.map(\.status) == ["failed"], "\(records)")
                let sent = origin.requests.filter { $0.path == "/flaky/small.jpg" }.count
                #expect(sent == 1 + retries, "--retries \(retries): \(sent) requests")
            }
            // A host that recovers within the budget is still fetched: 503, then 429 with
            // Retry-After, then the image (three requests, two retries).
            origin.resetCounts()
            let recovering = origin.url("/flaky/small.jpg?statuses=503,429&retryAfter=1")
            let (ok, okRecords, _) = try await Self.fetch([recovering], [])
            #expect(ok.status == 0, "\(ok.stdout) \(ok.stderr)")
            #expect(okRecords.map(\.status) == ["ok"], "\(okRecords)")
            #expect(origin.requests.filter { $0.path == "/flaky/small.jpg" }.count == 3)
        }
    }
}
