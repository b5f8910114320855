import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `--retry-failed RUN.jsonl --output-format webdataset`: a retried sample is the sample the first
/// run would have written — its key, caption and `--save-cols` columns — read back with the PyPI
/// `webdataset` reader (``FetchDatasetTests/read(_:)``) from a real `webimage fetch` child.
@Suite("webimage fetch --retry-failed into webdataset shards")
struct FetchRetryFailedDatasetTests {
    static func fetch(_ arguments: [String]) async throws -> CommandResult {
        // A 120 s timeout: the flaky route's failures are counted per request, so one that a
        // loaded machine let run past the default 15 s (seen beside the heavy suites) would fail
        // one run more than the test plans for.
        try await WebImageCommand.run(
            ["fetch", "--no-cache", "--retries", "0", "--timeout", "120", "--output-format", "webdataset", "--shard-size", "2"] + arguments)
    }

    /// Writes a CSV of `url,caption,key,extra` rows.
    static func csv(_ rows: [[String]], in dir: URL) throws -> URL {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        let list = dir.appendingPathComponent("list.csv")
        try (["url,caption,key,extra"] + rows.map { $0.map(quoted).joined(separator: ",") }).joined(separator: "\n")
            .appending("\n").write(to: list, atomically: true, encoding: .utf8)
        return list
    }

    /// Every key of a folder's shards appears once.
    static func expectUniqueKeys(_ samples: [FetchDatasetTests.Sample], _ folder: String) {
        #expect(Set(samples.map(\.key)).count == samples.count, "\(folder): \(samples.map(\.key).sorted())")
    }

    @Test func retriedSamplesKeepTheirKeyCaptionAndSavedColumns() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let flaky = { (n: Int) in origin.url("/flaky/small.jpg?fails=1&failStatus=500&copy=\(n)").absoluteString }
            let rows = [
                [origin.imageURL("small.jpg").absoluteString, "served, at once", "first", "a"],
                [flaky(1), "a \"quoted\" caption, with a comma", "second.key", "b"],
                [origin.imageURL("logo.png").absoluteString, "the logo", "third", "c"],
                [flaky(2), "café ☕\non two lines", "fourth", "d"],
                [flaky(3), "", "fifth", ""],
            ]
            let list = try Self.csv(rows, in: dir)
            let first = dir.appendingPathComponent("first"), retried = dir.appendingPathComponent("retried")
            let run1 = dir.appendingPathComponent("run1.jsonl"), run2 = dir.appendingPathComponent("run2.jsonl")
            let columns = ["--caption-col", "caption", "--key-col", "key", "--save-cols", "extra"]
            let result = try await Self.fetch(["--input", list.path, "--output", first.path, "--jsonl", run1.path] + columns)
            #expect(result.status == 3, "the flaky rows fail the first time: \(result.stdout) \(result.stderr)")
            let before = try await FetchDatasetTests.read(first)
            #expect(before.filter { $0.json["status"]?.text == "failed_to_download" }.count == 3, "\(before.map(\.json))")

            let again = try await Self.fetch(["--retry-failed", run1.path, "--output", retried.path, "--jsonl", run2.path])
            #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
            let after = try await FetchDatasetTests.read(retried)
            #expect(after.count == 3, "\(after.map(\.key))")
            Self.expectUniqueKeys(after, "retried")
            let firstKeys = Dictionary(before.map { ($0.json["url"]?.text ?? "", $0.key) }, uniquingKeysWith: { a, _ in a })
            for row in rows where row[0].contains("/flaky/") {
                let sample = try #require(after.first { $0.json["url"]?.text == row[0] }, "\(row[0]) was not retried")
                #expect(sample.key == firstKeys[row[0]] && sample.key == row[2].replacingOccurrences(of: ".", with: "_"), "\(sample.key)")
                #expect(sample.json["key"]?.text == sample.key)
                #expect(sample.json["status"]?.text == "success" && sample.decoded == [120, 80])
                #expect(sample.txt == row[1] && sample.json["caption"]?.text == row[1], "\(sample.key): \(String(describing: sample.txt))")
                #expect(sample.json["extra"]?.text == row[3], "\(sample.json)")
            }
        }
    }

    /// A share (`--shard 1/2`) retried twice, with img2dataset's default keys: the URLs still
    /// failing after the first retry keep their key into the second. Each run's shards hold every
    /// key once; the earlier folders still hold the failed samples of those keys (shards are
    /// never rewritten), which the README says.
    @Test func aShareRetriedTwiceKeepsItsKeys() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let rows = (1...16).map { n in
                n % 2 == 0
                    ? [origin.url("/flaky/small.jpg?fails=2&failStatus=500&copy=\(n)").absoluteString, "flaky \(n)", "k\(n)", "x\(n)"]
                    : [origin.imageURL("small.jpg", query: "copy=\(n)").absoluteString, "fine \(n)", "k\(n)", "x\(n)"]
            }
            let list = try Self.csv(rows, in: dir)
            let folders = ["a", "b", "c"].map { dir.appendingPathComponent($0) }
            let records = ["a", "b", "c"].map { dir.appendingPathComponent("\($0).jsonl") }
            let first = try await Self.fetch([
                "--input", list.path, "--shard", "1/2", "--output", folders[0].path, "--jsonl", records[0].path,
                "--caption-col", "caption", "--save-cols", "extra",
            ])
            #expect([0, 3].contains(first.status), "\(first.stdout) \(first.stderr)")
            let share = try await FetchDatasetTests.read(folders[0])
            Self.expectUniqueKeys(share, "first")
            let failed = share.filter { $0.json["status"]?.text == "failed_to_download" }
            // Eight flaky rows of sixteen: all eight in the other share is a 1-in-256 chance.
            #expect(!failed.isEmpty, "no flaky row in this share: \(share.map(\.json))")
            #expect(share.allSatisfy { $0.key.hasPrefix("1-") }, "\(share.map(\.key))")

            for step in 1...2 {
                let result = try await Self.fetch([
                    "--retry-failed", records[step - 1].path, "--shard", "1/2", "--output", folders[step].path, "--jsonl", records[step].path,
                ])
                #expect(result.status == (step == 1 && !failed.isEmpty ? 3 : 0), "retry \(step): \(result.stdout) \(result.stderr)")
                let samples = try await FetchDatasetTests.read(folders[step])
                Self.expectUniqueKeys(samples, "retry \(step)")
                #expect(samples.map(\.key).sorted() == failed.map(\.key).sorted(), "retry \(step)")
                for sample in samples {
                    let earlier = try #require(failed.first { $0.key == sample.key })
                    #expect(sample.json["url"] == earlier.json["url"] && sample.txt == earlier.txt && sample.json["extra"] == earlier.json["extra"])
                    #expect(sample.json["status"]?.text == (step == 1 ? "failed_to_download" : "success"), "retry \(step): \(sample.json)")
                }
            }
        }
    }
}
