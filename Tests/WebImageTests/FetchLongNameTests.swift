import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
/// A URL's last segment may be longer than a file system allows a name (255 bytes): such a line
/// once failed as "File name too long", counted as an output error (exit 1) on every retry of a
/// shard. Names are cut to 120 bytes plus 8 hex digits of the whole name's hash.
@Suite("webimage fetch: names from long URLs")
struct FetchLongNameTests {
    @Test func longLastSegmentsAndExtensionsGetShortDistinctNames() async throws {
        let png = try #require(SampleFiles.standard["logo.png"])
        let long = String(repeating: "A", count: 250), other = String(repeating: "ab-", count: 90)
        let names = [long + ".png", long + "B.png", other + ".png", "x." + String(repeating: "e", count: 240)]
        try await withOrigin(files: Dictionary(uniqueKeysWithValues: names.map { ($0, png) })) { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let out = dir.appendingPathComponent("out"), jsonl = dir.appendingPathComponent("run.jsonl")
            let urls = names.map { origin.imageURL($0).absoluteString }
            let result = try await WebImageCommand.run(
                ["fetch", "--input", "-", "--output", out.path, "--no-cache", "--jsonl", jsonl.path], stdin: urls.joined(separator: "\n"), timeout: .seconds(120))
            #expect(result.status == 0, "\(result.stderr)")
            let records = try FetchListTests.records(jsonl)
            #expect(records.count == 4 && records.allSatisfy { $0.status == "ok" }, "\(records.map { "\($0.status) \($0.error ?? "")" })")
            let files = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { !$0.hasPrefix(".") }
            #expect(files.count == 4 && files.allSatisfy { $0.utf8.count <= 180 }, "\(files)")
            #expect(files.filter { $0.hasPrefix(String(repeating: "A", count: 120) + "-") && $0.hasSuffix(".png") }.count == 2, "\(files)")
            for file in files { #expect(try Data(contentsOf: out.appendingPathComponent(file)) == png, "\(file)") }
        }
    }
}
}
