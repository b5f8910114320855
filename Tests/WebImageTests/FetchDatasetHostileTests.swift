import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Hostile dataset lists through the real `webimage fetch`: a quote that never closes, a 100 MB
/// line, bytes that are not UTF-8. Each is its row's failure; memory stays bounded.
@Suite("webimage fetch: hostile CSV and JSONL lists")
struct FetchDatasetHostileTests {
    @Test func anUnclosedQuoteCostsOneRecordAndReadingGoesOn() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let good = origin.imageURL("small.jpg").absoluteString, after = origin.imageURL("logo.png").absoluteString
            // 2,000 lines of 40 bytes inside the open quote: past the 64 KB record limit.
            let swallowed = (0..<2000).map { "line \($0) of a caption that never ends" }
            let csv = (["url,caption", "\(good),fine", "\(good)?n=2,\"opened here"] + swallowed + ["\(after),after"]).joined(separator: "\n")
                + "\n\(good)?n=3,\"open at the end\n"
            let list = dir.appendingPathComponent("list.csv")
            try csv.write(to: list, atomically: true, encoding: .utf8)
            let jsonl = dir.appendingPathComponent("records.jsonl")
            let result = try await WebImageCommand.run([
                "fetch", "--no-cache", "--input", list.path, "--output", dir.appendingPathComponent("out").path, "--jsonl", jsonl.path,
            ])
            #expect(result.status == 3, "\(result.stderr)")
            let records = try FetchListTests.records(jsonl).sorted { $0.line < $1.line }
            #expect(records.first?.status == "ok" && records.first?.line == 2)
            let invalid = records.filter { $0.status == "invalid" }
            #expect(invalid.first?.line == 3 && invalid.first?.error?.contains("still open after 65536 bytes") == true, "\(invalid)")
            #expect(invalid.last?.error == "a quoted field never closes", "\(invalid)")
            // After the open quote's record, rows are read again: the logo's line is fetched.
            #expect(records.contains { $0.url == after && $0.status == "ok" }, "\(records.map(\.url))")
            #expect(origin.requestCount(path: "/images/logo.png") == 1)
        }
    }

    @Test func aHundredMegabyteCSVLineIsSkippedInBoundedMemory() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let first = origin.imageURL("small.jpg").absoluteString, after = origin.imageURL("logo.png").absoluteString
            let out = dir.appendingPathComponent("out")
            // 100 MB in one quoted caption without a newline, streamed.
            let run = try await StreamedInput.run(
                [
                    "fetch", "--input", "-", "--input-format", "csv", "--caption-col", "caption", "--output", out.path,
                    "--no-cache", "--output-format", "webdataset", "--shard-size", "10",
                ],
                head: "url,caption\n\(first),ok\n\(first)?n=2,\"", megabytes: 100, tail: "\"\n\(after),after\n"
            ) { origin.requestCount(path: "/images/logo.png") == 1 }
            #expect(run.conditionMet)
            #expect(run.status == 3)  // the long row is invalid
            let peakKB = try #require(run.peakBytes, "no VmHWM") / 1024
            #expect(peakKB < 128 * 1024, "the process peaked at \(peakKB) KB reading a 100 MB line")
            let samples = try await FetchDatasetTests.read(out).sorted { $0.key < $1.key }
            #expect(samples.map(\.key) == ["000000", "000001", "000002"])
            #expect(samples.map(\.txt) == ["ok", nil, "after"])
            #expect(samples[1].json["error_message"]?.text?.contains("longer than 65536 bytes") == true)
        }
    }

    @Test func bytesThatAreNotUTF8FailTheirRowOnly() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let good = origin.imageURL("small.jpg").absoluteString
            var bytes = Data("url,caption\n\(good)?n=1,caf".utf8)
            bytes.append(contentsOf: [0xE9, 0xFF, 0xC3])  // Latin-1 é, then bytes no UTF-8 text has
            bytes.append(Data("\n\(good),fine\n{\"url\": 1}\n".utf8))
            let list = dir.appendingPathComponent("list.csv")
            try bytes.write(to: list)
            let jsonl = dir.appendingPathComponent("records.jsonl")
            let result = try await WebImageCommand.run([
                "fetch", "--no-cache", "--input", list.path, "--output", dir.appendingPathComponent("out").path, "--jsonl", jsonl.path,
            ])
            #expect(result.status == 3)
            let records = try FetchListTests.records(jsonl).sorted { $0.line < $1.line }
            #expect(records.map(\.status) == ["invalid", "ok", "invalid"], "\(records)")
            #expect(records.first?.error == "not UTF-8 text")
            // The same bytes in a JSON line: that line is invalid, the others are fetched.
            var lines = Data("{\"url\": \"\(good)\"}\n{\"url\": \"".utf8)
            lines.append(contentsOf: [0xFF, 0xFE])
            lines.append(Data("\"}\n".utf8))
            let jsonList = dir.appendingPathComponent("list.jsonl")
            try lines.write(to: jsonList)
            let fromJSON = try await WebImageCommand.run([
                "fetch", "--no-cache", "--input", jsonList.path, "--output", dir.appendingPathComponent("out2").path, "--jsonl", jsonl.path,
            ])
            #expect(fromJSON.status == 3)
            #expect(try FetchListTests.records(jsonl).sorted { $0.line < $1.line }.map(\.status) == ["ok", "invalid"])
        }
    }

    @Test func aFullDiskDropsTheShardItBrokeAndKeepsTheOthers() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            // The output folder is a 64 KB tmpfs: the small image's shard fits, the 105 KB logo's does not.
            let output = dir.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            let list = dir.appendingPathComponent("list.csv")
            try "url\n\(origin.imageURL("small.jpg"))\n\(origin.imageURL("logo.png"))\n".write(to: list, atomically: true, encoding: .utf8)
            let command = [WebImageCommand.executable.path, "fetch", "--input", list.path, "--output", output.path, "--no-cache",
                           "--output-format", "webdataset", "--shard-size", "1", "--concurrency", "1"]
            let (status, stdout) = try await FullDisk.run(command, output: output)
            #expect(status == 1, "\(stdout)")
            #expect(stdout.contains("00001.tar was not written"), "\(stdout)")
            #expect(stdout.contains("files: 00000.tar 00000_stats.json \n"), "the complete shard only, no temporary file: \(stdout)")
        }
    }
}
