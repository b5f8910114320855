import Foundation
import Testing
import WebImageOrigin

/// `webimage fetch`'s exit status through the real binary against the loopback origin: 3 when
/// the run finished with failed lines, 0 within `--max-failure-rate`, and the fatal codes (64,
/// 1) whatever the option says.
@Suite("webimage fetch exit status and --max-failure-rate")
struct FetchExitStatusTests {
    struct Summary: Decodable { var requested: Int; var succeeded: Int; var failed: Int; var duplicates: Int }

    /// Three images and one 404: a quarter of the lines fail.
    static func list(_ origin: ImageOrigin) -> [String] {
        ["small.jpg", "logo.png", "photo.webp"].map { origin.imageURL($0).absoluteString }
            + [origin.imageURL("missing.jpg", query: "status=404").absoluteString]
    }

    @Test func oneMissingImageAmongGoodLinesExitsThreeUnlessTheShareIsAllowed() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            func fetch(_ extra: [String]) async throws -> (status: Int32, summary: Summary) {
                let result = try await WebImageCommand.run(
                    ["fetch"] + Self.list(origin) + ["--output", temporaryDirectory().path, "--cache-dir", cache.path, "--json"] + extra)
                let line = try #require(result.stdout.split(separator: "\n").last, "\(result.stderr)")
                return (result.status, try JSONDecoder().decode(Summary.self, from: Data(line.utf8)))
            }
            let plain = try await fetch([])
            #expect(plain.status == 3, "the run finished, one line failed")
            #expect(plain.summary.succeeded == 3 && plain.summary.failed == 1)
            // 1 of 4 lines failed: at most 25 % is allowed, 20 % is not.
            for (rate, status) in [("0.25", 0), ("25%", 0), ("0.2", 3), ("20%", 3), ("1", 0), ("0", 3)] as [(String, Int32)] {
                #expect(try await fetch(["--max-failure-rate", rate]).status == status, "--max-failure-rate \(rate)")
            }
            // Every line failing is still within a rate of 1 (img2dataset's behaviour).
            let allFailed = try await WebImageCommand.run([
                "fetch", origin.imageURL("gone.jpg", query: "status=404").absoluteString, "--output", temporaryDirectory().path,
                "--cache-dir", cache.path, "--max-failure-rate", "1",
            ])
            #expect(allFailed.status == 0 && allFailed.stdout.contains("0 succeeded, 1 failed"), "\(allFailed.stdout)")
            // No failure at all: 0.
            let good = try await WebImageCommand.run(
                ["fetch", origin.imageURL("small.jpg").absoluteString, "--output", temporaryDirectory().path, "--cache-dir", cache.path])
            #expect(good.status == 0, "\(good.stdout)")
        }
    }

    @Test func repeatedLinesOfAFailedURLCountOnceInTheShare() async throws {
        try await withOrigin { origin in
            let missing = origin.imageURL("missing.jpg", query: "status=404").absoluteString
            let lines = [origin.imageURL("small.jpg").absoluteString, origin.imageURL("logo.png").absoluteString, missing, missing, missing]
            let result = try await WebImageCommand.run(
                ["fetch"] + lines + ["--output", temporaryDirectory().path, "--no-cache", "--max-failure-rate", "0.4"])
            // 1 failed of 3 distinct lines (33 %): the two repeats are duplicates, not lines.
            #expect(result.status == 0, "\(result.stdout)")
            #expect(result.stdout.contains("1 failed") && result.stdout.contains("2 duplicate lines"), "\(result.stdout)")
        }
    }

    @Test func fatalErrorsKeepTheirCodesWhateverTheRate() async throws {
        let out = temporaryDirectory().path
        for bad in ["1.5", "-0.1", "abc", "150%", "nan", ""] {
            let result = try await WebImageCommand.run(["fetch", "http://127.0.0.1:9/a.jpg", "--output", out, "--max-failure-rate", bad])
            #expect(result.status == 64 && result.stderr.contains("--max-failure-rate"), "\(bad): \(result.stderr)")
        }
        let unreadable = try await WebImageCommand.run([
            "fetch", "--input", temporaryDirectory().appendingPathComponent("no-such-list.txt").path, "--output", out, "--max-failure-rate", "1",
        ])
        #expect(unreadable.status == 1 && unreadable.stderr.contains("cannot read"), "\(unreadable.stderr)")
        let help = try await WebImageCommand.run(["fetch", "--help"])
        #expect(help.stdout.contains("--max-failure-rate "), "\(help.stdout)")
    }
}
