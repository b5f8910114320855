import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
/// `webimage fetch --skip-existing` into a folder whose manifest has a million lines: the real
/// binary against the real origin, its peak memory (GNU time's `%M`) against the same run beside
/// a manifest of a few lines, and its names and skips as before (issue #30).
@Suite("webimage fetch: resuming beside a million-line manifest")
struct FetchLargeManifestTests {
    struct Row: Encodable {
        var url: String
        var file: String
        var bytes: Int
    }

    /// Writes the manifest: `filler` lines of other URLs (files `old-N.jpg`, not in the folder),
    /// then `rows`.
    static func writeManifest(in output: URL, filler: Int, rows: [Row]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let path = output.appendingPathComponent(".webimage-fetch.jsonl")
        FileManager.default.createFile(atPath: path.path, contents: nil)
        let handle = try FileHandle(forWritingTo: path)
        defer { try? handle.close() }
        var chunk = Data()
        for n in 0..<filler {
            chunk += try encoder.encode(Row(url: "https://elsewhere.example.org/archive/\(n)/picture.jpg", file: "old-\(n).jpg", bytes: 1000 + n))
            chunk.append(0x0A)
            if chunk.count > 1 << 20 { try handle.write(contentsOf: chunk); chunk.removeAll(keepingCapacity: true) }
        }
        for row in rows { chunk += try encoder.encode(row) + Data([0x0A]) }
        try handle.write(contentsOf: chunk)
    }

    @Test func aMillionLineManifestCostsNoMoreMemoryAndNamesStayApart() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let kept = origin.imageURL("thumb-1.jpg").absoluteString, short = origin.imageURL("thumb-2.jpg").absoluteString
            let missing = origin.imageURL("thumb-3.jpg").absoluteString
            let fresh = (1...3).map { origin.imageURL("small.jpg", query: "n=\($0)").absoluteString }
            let thumb = { (n: Int) in try #require(SampleFiles.standard["thumb-\(n).jpg"]) }
            let rows = [
                Row(url: kept, file: "thumb-1.jpg", bytes: try thumb(1).count),
                Row(url: short, file: "thumb-2.jpg", bytes: try thumb(2).count),
                Row(url: missing, file: "thumb-3.jpg", bytes: try thumb(3).count),
                Row(url: "https://elsewhere.example.org/small.jpg", file: "small.jpg", bytes: 10),  // its file is gone
            ]
            var peaks: [Int] = []
            for filler in [0, 1_000_000] {
                let output = dir.appendingPathComponent("out-\(filler)")
                try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
                try Self.writeManifest(in: output, filler: filler, rows: rows)
                try thumb(1).write(to: output.appendingPathComponent("thumb-1.jpg"))
                try thumb(2).prefix(100).write(to: output.appendingPathComponent("thumb-2.jpg"))  // cut short
                try Data("the user's".utf8).write(to: output.appendingPathComponent("small-1.jpg"))
                let lists = dir.appendingPathComponent("list-\(filler)")
                try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
                let list = try FetchListTests.write([kept, short, missing] + fresh, in: lists)
                let jsonl = dir.appendingPathComponent("run-\(filler).jsonl")
                let run = try await BombMemoryTests.peakMemory([
                    "fetch", "--input", list.path, "--output", output.path, "--no-cache", "--concurrency", "1",
                    "--skip-existing", "--jsonl", jsonl.path,
                ])
                #expect(run.status == 0, "\(run.output)")
                let lines = try FetchListTests.records(jsonl)
                #expect(lines.filter { $0.status == "skipped" }.map(\.url) == [kept])
                let files = Dictionary(uniqueKeysWithValues: lines.filter { $0.status == "ok" }.map { ($0.url, $0.file ?? "") })
                // The short and missing files' names stay recorded; three URLs of this run that want
                // small.jpg pass the earlier run's small.jpg and the user's small-1.jpg.
                #expect(files == [short: "thumb-2-1.jpg", missing: "thumb-3-1.jpg", fresh[0]: "small-2.jpg", fresh[1]: "small-3.jpg", fresh[2]: "small-4.jpg"])
                #expect(try Data(contentsOf: output.appendingPathComponent("thumb-2-1.jpg")) == thumb(2))
                #expect(try Data(contentsOf: output.appendingPathComponent("small-1.jpg")) == Data("the user's".utf8))
                let left = try FileManager.default.contentsOfDirectory(atPath: output.path)
                #expect(!left.contains { $0.contains(".partial-") }, "the index is removed: \(left)")
                peaks.append(run.bytes)
            }
            let growth = peaks[1] - peaks[0]
            #expect(growth < 48 << 20, "a million manifest lines added \(growth >> 20) MB (\(peaks[0] >> 20) → \(peaks[1] >> 20) MB)")
        }
    }
}
}
