import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `--rate-per-host` and host-level back-off through a real `webimage fetch` child: the origin's
/// request log says when each request arrived. Bounds are generous (a loaded 2-core machine only
/// ever makes gaps longer, and these are lower bounds).
@Suite("webimage fetch paces each host")
struct FetchHostPacingTests {
    static func fetch(_ urls: [URL], _ extra: [String]) async throws -> CommandResult {
        let out = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        return try await WebImageCommand.run(
            ["fetch", "--input", "-", "--output", out.path, "--no-cache", "--retries", "0"] + extra,
            stdin: urls.map(\.absoluteString).joined(separator: "\n"))
    }

    static func seconds(_ from: LoggedRequest, _ to: LoggedRequest) -> Double {
        let gap = (to.arrivedAt - from.arrivedAt).components
        return Double(gap.seconds) + Double(gap.attoseconds) / 1e18
    }

    static func answer(_ origin: ImageOrigin, status: Int, retryAfter: String) -> URL {
        let header = ("Retry-After:" + retryAfter).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return origin.url("/answer/small.jpg?status=\(status)&header=\(header)")
    }

    @Test func ratePerHostSpacesRequests() async throws {
        try await withOrigin { origin in
            let urls = (1...6).map { origin.imageURL("small.jpg", query: "copy=\($0)") }
            let jsonl = temporaryDirectory().appendingPathComponent("run.jsonl")
            let result = try await Self.fetch(urls, ["--rate-per-host", "4/s", "--concurrency", "6", "--jsonl", jsonl.path])
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            let arrivals = origin.requests.filter { $0.path == "/images/small.jpg" }
            #expect(arrivals.count == 6)
            // 4/s: the sixth request cannot start before 1.25 s into the run, so the last load ends
            // after that, by the child's own clock (`at`). A lower bound that load cannot break:
            // the origin's arrival log can bunch arrivals when its event loop waits for a core.
            // Unpaced, all six end within ~0.2 s.
            struct Record: Decodable { var at: Double? }
            let ends = try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n")
                .map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)).at ?? 0 }
            #expect(ends.count == 6 && (ends.max() ?? 0) >= 1.2, "\(ends)")

            for bad in ["0", "-1/s", "abc", "1e9", "nan", "2/m"] {
                let refused = try await Self.fetch(urls, ["--rate-per-host", bad])
                #expect(refused.status == 64, "\(bad): \(refused.stderr)")
            }
        }
    }

    /// A load waiting for its host's turn holds none of the run's slots: with two slots, four
    /// loads of a host paced at 1/s and then one of another host, the other host's load ends
    /// at once, not after the first host's three-second queue (it used to wait in a slot).
    @Test(.timeLimit(.minutes(1)))
    func aLoadWaitingForItsHostsTurnHoldsNoSlot() async throws {
        try await withOrigin { slow in
            let other = try await ImageOrigin.start(files: SampleFiles.standard, address: "127.0.0.2")
            do {
                let urls = (1...4).map { slow.imageURL("small.jpg", query: "copy=\($0)") } + [other.imageURL("logo.png")]
                let jsonl = temporaryDirectory().appendingPathComponent("run.jsonl")
                let result = try await Self.fetch(urls, ["--rate-per-host", "1/s", "--concurrency", "2", "--jsonl", jsonl.path])
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                // By the child's own clock (`at`: when each line ended).
                struct Record: Decodable { var line: Int; var at: Double? }
                let ends = Dictionary(uniqueKeysWithValues: try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n")
                    .map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }.map { ($0.line, $0.at ?? 0) })
                #expect(ends.count == 5, "\(ends)")
                // The paced host still goes at 1/s: its fourth load cannot end before 3 s.
                #expect((ends[4] ?? 0) >= 2.9, "\(ends)")
                // The other host's load went while the first host waited: before that host's
                // second load (which cannot end before 1 s), instead of after its fourth.
                #expect((ends[5] ?? .infinity) < (ends[2] ?? 0), "\(ends)")
                #expect(other.requests.filter { $0.path == "/images/logo.png" }.count == 1)
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }

    /// A line whose host answered `429` with `Retry-After: 5` waits for it parked, in no slot:
    /// with one slot, another host's line goes meanwhile (it used to wait behind the sleeping
    /// retry), and the first line is tried again when its host is due, and succeeds.
    @Test(.timeLimit(.minutes(1)))
    func aLineWaitingForRetryAfterHoldsNoSlot() async throws {
        try await withOrigin { paused in
            let other = try await ImageOrigin.start(files: SampleFiles.standard, address: "127.0.0.2")
            do {
                let urls = [paused.url("/flaky/small.jpg?fails=1&failStatus=429&retryAfter=5"), other.imageURL("logo.png")]
                let out = temporaryDirectory(), jsonl = out.appendingPathComponent("run.jsonl")
                defer { try? FileManager.default.removeItem(at: out) }
                let result = try await WebImageCommand.run(
                    ["fetch", "--input", "-", "--output", out.appendingPathComponent("files").path, "--no-cache", "--retries", "1",
                     "--concurrency", "1", "--jsonl", jsonl.path],
                    stdin: urls.map(\.absoluteString).joined(separator: "\n"))
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                struct Record: Decodable { var line: Int; var at: Double?; var status: String }
                let records = try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n")
                    .map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
                let ends = Dictionary(uniqueKeysWithValues: records.map { ($0.line, $0.at ?? 0) })
                #expect(records.count == 2 && records.allSatisfy { $0.status == "ok" }, "\(records)")
                // The other host's line ended before the paused one was even due again (5 s; the
                // margin is for a loaded machine's debug build).
                #expect((ends[2] ?? .infinity) < 4.5 && (ends[1] ?? 0) >= 4.5, "\(ends)")
                #expect(paused.requests.filter { $0.path == "/flaky/small.jpg" }.count == 2)
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }

    @Test func retryAfterPausesTheWholeHost() async throws {
        try await withOrigin { origin in
            // One at a time: line 1 is refused with Retry-After, lines 2 and 3 are other URLs of the host.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            for status in [429, 503] {
                // The date is made just before its run: whole seconds and the child's start-up eat into it.
                let value = status == 429 ? "2" : formatter.string(from: Date(timeIntervalSinceNow: 10))
                let least = status == 429 ? 1.5 : 1.0
                origin.resetCounts()
                let urls = [Self.answer(origin, status: status, retryAfter: value), origin.imageURL("small.jpg"), origin.imageURL("logo.png")]
                let jsonl = temporaryDirectory().appendingPathComponent("run.jsonl")
                let result = try await Self.fetch(urls, ["--concurrency", "1", "--jsonl", jsonl.path])
                #expect(result.status == 3, "line 1 fails: \(result.stdout)")
                #expect(result.stdout.contains("2 succeeded"), "\(result.stdout)")
                // By the child's own clock (`at`: when each line ended): the origin's arrival log can
                // bunch arrivals when its event loop waits for a core.
                struct Record: Decodable { var line: Int; var at: Double? }
                let ends = Dictionary(uniqueKeysWithValues: try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n")
                    .map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }.map { ($0.line, $0.at ?? 0) })
                let waited = (ends[2] ?? 0) - (ends[1] ?? 0)
                #expect(waited >= least, "\(status) Retry-After \(value): the host waited \(waited) s")
            }

            // Values no one can wait for are ignored (the retry policy's backoff applies), never a trap.
            origin.resetCounts()
            let hostile = ["1e300", "-1", "nan", "99999999999999999999999999999x", "Thu, 01 Jan 1970 00:00:00 GMT"]
            let result = try await Self.fetch(hostile.map { Self.answer(origin, status: 429, retryAfter: $0) } + [origin.imageURL("small.jpg")], ["--concurrency", "1"])
            #expect(result.status == 3 && result.stdout.contains("1 succeeded, 5 failed"), "\(result.stdout) \(result.stderr)")
        }
    }
}
