import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
    /// CSV lists with quotes inside fields and every line ending, read by `webimage fetch` and by
    /// Python's `csv` (the reference), the captions compared in the shards the PyPI `webdataset`
    /// reader reads. Heavy: each case runs three child processes.
    @Suite("webimage fetch: quotes and line endings in CSV lists")
    struct FetchCSVQuotesTests {
        /// Quotes inside a field (`a 5" screen`) are characters, as in Python's `csv`: a list once
        /// lost every row up to 64 KB after one, with exit 0. Lines ending in a lone `\r` are lines.
        /// Python's `csv` reads the same files, and the captions must be its captions.
        @Test(arguments: ["\n", "\r\n", "\r"])
        func strayQuotesAndEveryLineEndingReadAsPythonsCSVDoes(_ ending: String) async throws {
            try await withOrigin { origin in
                let dir = temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: dir) }
                var captions = [#"a 5" screen"#, #""quoted, with a comma""#, #""say ""hi""""#, #"7" tall, and "more""#, "plain", #"x"y"z"#]
                if ending != "\r" { captions.append("\"two\(ending)lines\"") }
                let rows = captions.enumerated().map { "\(origin.imageURL("small.jpg").absoluteString)?n=\($0.offset),\($0.element)" }
                let list = dir.appendingPathComponent("list.csv")
                try Data((["url,caption"] + rows).joined(separator: ending).utf8 + Array(ending.utf8)).write(to: list)
                let script = "import csv, json, sys; print(json.dumps([r['caption'] for r in csv.DictReader(open(sys.argv[1], newline=''))]))"
                let python = try await WebImageCommand.run(["python3", "-c", script, list.path], program: URL(fileURLWithPath: "/usr/bin/env"))
                let expected = try JSONDecoder().decode([String].self, from: Data(python.stdout.utf8))
                #expect(expected.count == captions.count, "\(python.stderr)")
                let out = dir.appendingPathComponent("out")
                let result = try await FetchDatasetTests.fetch(
                    ["--input", list.path, "--caption-col", "caption", "--output", out.path, "--output-format", "webdataset"])
                #expect(result.status == 0, "\(result.stderr)")
                let samples = try await FetchDatasetTests.read(out).sorted { $0.key < $1.key }
                #expect(samples.map { $0.txt ?? "" } == expected.map { $0.replacingOccurrences(of: "\r\n", with: "\n") })
                #expect(origin.requestCount(path: "/images/small.jpg") == captions.count)
            }
        }
    }
}
