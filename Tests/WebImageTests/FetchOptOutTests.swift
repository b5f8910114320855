import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `X-Robots-Tag` opt-outs (img2dataset's `noai`, `noimageai`, `noindex`, `noimageindex`): a real
/// `webimage fetch` against the loopback origin's `/answer` route, which sends the header given.
@Suite("webimage fetch honours X-Robots-Tag opt-outs")
struct FetchOptOutTests {
    static func answer(_ origin: ImageOrigin, _ tag: String?, copy: Int) -> String {
        let header = tag.map { "&header=" + ("X-Robots-Tag:" + $0).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! } ?? ""
        return origin.url("/answer/small.jpg?copy=\(copy)" + header).absoluteString
    }

    struct Row: Decodable { var line: Int; var status: String; var file: String?; var error: String? }

    @Test func optedOutImagesAreSkippedReportedAndNotCached() async throws {
        try await withOrigin { origin in
            let tags: [String?] = [nil, "noai", "NoImageAI", "noindex, nofollow", "otherbot: noindex", "webimage: noimageindex", "nofollow", "unavailable_after: 25 Jun 2030 15:00:00 PST"]
            let optedOut: Set<Int> = [2, 3, 4, 6]  // the lines whose tag applies to every agent or to webimage
            let list = tags.enumerated().map { Self.answer(origin, $1, copy: $0) }.joined(separator: "\n")
            let cache = temporaryDirectory()
            func run(_ extra: [String], processed: Bool = false) async throws -> (CommandResult, [Row], URL) {
                let out = temporaryDirectory(), jsonl = temporaryDirectory().appendingPathComponent("run.jsonl")
                let result = try await WebImageCommand.run(
                    ["fetch", "--input", "-", "--output", out.path, "--cache-dir", cache.path, "--jsonl", jsonl.path]
                        + (processed ? ["--resize", "16x16", "--format", "png"] : []) + extra, stdin: list)
                let rows = try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n")
                    .map { try JSONDecoder().decode(Row.self, from: Data($0.utf8)) }
                return (result, rows, out)
            }

            let (result, rows, out) = try await run([])
            #expect(result.status == 0, "an opt-out is not a failure: \(result.stderr)")
            #expect(result.stdout.contains("4 opted out by their server"), "\(result.stdout)")
            for row in rows {
                if optedOut.contains(row.line) {
                    #expect(row.status == "opted-out" && row.file == nil, "\(row)")
                    #expect(row.error?.contains("X-Robots-Tag") == true, "\(row)")
                } else {
                    #expect(row.status == "ok" && row.file != nil, "\(row)")
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".jpg") }.count == 4)

            // Nothing opted out was kept in the cache: a second run asks the server again and
            // is refused again (a cache hit would have no header to check).
            let disk = try DiskCache(directory: cache)
            for (index, line) in list.split(separator: "\n").enumerated() {
                let stored = await disk.data(for: ImageRequest(url: URL(string: String(line))!).dataKey)
                #expect((stored == nil) == optedOut.contains(index + 1), "line \(index + 1)")
            }
            let (_, again, _) = try await run([])
            #expect(again.filter { $0.status == "opted-out" }.map(\.line).sorted() == optedOut.sorted())

            // Re-encoded output takes the same path, variants included.
            let (_, processed, _) = try await run([], processed: true)
            #expect(processed.filter { $0.status == "opted-out" }.map(\.line).sorted() == optedOut.sorted())

            // --ignore-opt-out writes them all.
            let (ignored, all, _) = try await run(["--ignore-opt-out"])
            #expect(ignored.status == 0 && all.allSatisfy { $0.status == "ok" }, "\(all)")
        }
    }
}
