import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `webimage fetch` of dataset lists (CSV, TSV, JSONL with img2dataset's column options) into
/// webdataset shards, read back by the `webdataset` Python package (scripts/setup installs it):
/// a real `webimage` child against the real origin, and a reader nobody here wrote.
@Suite("webimage fetch: dataset inputs and webdataset shards")
struct FetchDatasetTests {
    /// One sample as `webdataset.WebDataset` gives it, summarised by the script below.
    struct Sample: Decodable {
        var key: String
        var extensions: [String]
        var json: [String: JSONValue]
        var txt: String?
        /// The image's size as Pillow decodes it (`nil` when there is no image).
        var decoded: [Int]?
        var shard: String
    }

    enum JSONValue: Decodable, Equatable {
        case string(String), number(Double), null, other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null } else if let text = try? container.decode(String.self) { self = .string(text) } else if let number = try? container.decode(Double.self) { self = .number(number) } else { self = .other }
        }

        var text: String? { if case .string(let text) = self { text } else { nil } }
        var number: Int? { if case .number(let value) = self { Int(value) } else { nil } }
    }

    /// Reads every shard with `webdataset.WebDataset` and prints one JSON line a sample.
    static let reader = """
        import io, json, sys, webdataset
        from PIL import Image
        shards = sys.argv[1:]
        for shard in shards:
            for sample in webdataset.WebDataset(shard, shardshuffle=False):
                exts = sorted(k for k in sample if not k.startswith("__"))
                image = [k for k in exts if k not in ("json", "txt")]
                decoded = None
                if image:
                    with Image.open(io.BytesIO(sample[image[0]])) as picture:
                        picture.load()
                        decoded = list(picture.size)
                print(json.dumps({
                    "key": sample["__key__"], "extensions": exts, "shard": shard.rsplit("/", 1)[-1],
                    "json": json.loads(sample["json"]), "decoded": decoded,
                    "txt": sample["txt"].decode("utf-8") if "txt" in sample else None,
                }))
        """

    /// Runs the reader over the `.tar` files of `directory`, in name order.
    static func read(_ directory: URL) async throws -> [Sample] {
        let shards = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tar") }.sorted()
        let result = try await WebImageCommand.run(
            ["python3", "-c", reader] + shards.map { directory.appendingPathComponent($0).path }, program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(result.status == 0, "webdataset could not read the shards: \(result.stderr)")
        return try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(Sample.self, from: Data($0.utf8)) }
    }

    static func fetch(_ arguments: [String]) async throws -> CommandResult {
        try await WebImageCommand.run(["fetch", "--no-cache"] + arguments)
    }

    @Test func csvWithCaptionsAndSavedColumnsBecomesShardsWebDatasetReads() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let out = dir.appendingPathComponent("shards")
            let rows: [(url: String, caption: String, license: String)] = [
                (origin.imageURL("small.jpg").absoluteString, "a small, \"quoted\" photo", "cc-by"),
                (origin.imageURL("logo.png").absoluteString, "a logo\non two lines", "cc0"),
                (origin.imageURL("missing.jpg", query: "status=404").absoluteString, "never there", "cc-by"),
                ("not a url", "bad row", "none"),
                (origin.imageURL("photo.webp").absoluteString, "café ☕", "cc-by-sa"),
                (origin.imageURL("small.jpg").absoluteString, "the same URL again", "cc0"),
                (origin.imageURL("thumb-1.jpg").absoluteString, "", "cc0"),
            ]
            func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            let csv = (["url,caption,license,source"] + rows.map { "\($0.url),\(quoted($0.caption)),\($0.license),test" }).joined(separator: "\r\n") + "\r\n"
            let list = dir.appendingPathComponent("list.csv")
            try csv.write(to: list, atomically: true, encoding: .utf8)
            let jsonl = dir.appendingPathComponent("records.jsonl")
            let result = try await Self.fetch([
                "--input", list.path, "--output", out.path, "--output-format", "webdataset", "--shard-size", "2",
                "--caption-col", "caption", "--save-cols", "license,source", "--jsonl", jsonl.path,
            ])
            #expect(result.status == 3, "two rows fail: \(result.stdout) \(result.stderr)")
            let all = try FileManager.default.contentsOfDirectory(atPath: out.path)
            #expect(!all.contains { $0.contains(".partial-") }, "a temporary file is left: \(all)")
            let names = all.filter { !$0.hasPrefix(".") }.sorted()
            #expect(names == ["00000.tar", "00000_stats.json", "00001.tar", "00001_stats.json", "00002.tar", "00002_stats.json", "00003.tar", "00003_stats.json"])

            // Within a shard samples are in the order their loads finished (as img2dataset's).
            let samples = try await Self.read(out).sorted { $0.key < $1.key }
            #expect(samples.map(\.key) == ["000000", "000001", "000010", "000011", "000020", "000021", "000030"])
            #expect(samples.map(\.shard) == ["00000.tar", "00000.tar", "00001.tar", "00001.tar", "00002.tar", "00002.tar", "00003.tar"])
            for (sample, row) in zip(samples, rows) {
                #expect(sample.json["url"]?.text == row.url.trimmingCharacters(in: .whitespaces))
                #expect(sample.json["key"]?.text == sample.key)
                #expect(sample.json["license"]?.text == row.license && sample.json["source"]?.text == "test")
                #expect(sample.json["caption"]?.text == row.caption)
                #expect(sample.txt == row.caption, "\(sample.key): \(String(describing: sample.txt))")
                let failed = row.url.contains("status=404") || row.url == "not a url"
                if failed {
                    #expect(sample.json["status"]?.text == "failed_to_download")
                    #expect(sample.json["error_message"]?.text?.isEmpty == false, "\(sample.json)")
                    #expect(sample.extensions == ["json", "txt"] && sample.decoded == nil)
                } else {
                    #expect(sample.json["status"]?.text == "success" && sample.json["error_message"] == .null)
                    let size = try #require(sample.decoded, "\(sample.key) has no image")
                    #expect(size == [sample.json["width"]?.number ?? -1, sample.json["height"]?.number ?? -1])
                    let format = try #require(sample.json["format"]?.text)
                    #expect(sample.extensions == [format, "json", "txt"].sorted())
                }
            }
            #expect(samples[0].decoded == [120, 80] && samples[1].decoded == [256, 256] && samples[4].decoded == [640, 480])
            #expect(samples[0].extensions.contains("jpg") && samples[1].extensions.contains("png") && samples[4].extensions.contains("webp"))
            // The repeated URL is a sample of its own (a dataset keeps every row).
            #expect(samples[5].json["status"]?.text == "success")
            let stats = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("00001_stats.json"))) as? [String: Any]
            #expect(stats?["count"] as? Int == 2 && stats?["successes"] as? Int == 0 && stats?["failed_to_download"] as? Int == 2)
            let records = try FetchListTests.records(jsonl)
            #expect(records.filter { $0.status == "ok" }.count == 5 && records.count == 7)
            #expect(records.first { $0.line == 2 }?.file == "00000.tar/000000")
            // A second run into the same folder is refused before it fetches anything.
            let requests = origin.requestCount(path: "/images/logo.png")
            let again = try await Self.fetch(["--input", list.path, "--output", out.path, "--output-format", "webdataset"])
            #expect(again.status == 1 && (again.stdout + again.stderr).contains("holds webdataset shards already (00000.tar)"))
            #expect(origin.requestCount(path: "/images/logo.png") == requests)
        }
    }

    /// Many rows of one `--key-col` value (a stranger's list can hold any): each takes the next free
    /// suffix in one look-up, past suffixed keys the list itself holds. (Each duplicate used to
    /// probe from `_2` up: 10,000 rows of one key took 15 s of CPU.)
    @Test func manyRowsOfOneKeyTakeTheNextFreeSuffixes() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("shards")
        // Not fetchable (no request is sent): each row is still a sample, its JSON says why.
        let keys = ["a", "a_2", "a", "a"] + Array(repeating: "b", count: 2000)
        let list = dir.appendingPathComponent("list.csv")
        try (["url,key"] + keys.enumerated().map { "ftp://example.invalid/\($0.offset),\($0.element)" }).joined(separator: "\n")
            .write(to: list, atomically: true, encoding: .utf8)
        let result = try await Self.fetch([
            "--input", list.path, "--output", out.path, "--output-format", "webdataset", "--shard-size", "10000", "--key-col", "key",
        ])
        #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
        let names = Set(try await Self.read(out).map(\.key))
        #expect(names.count == keys.count)
        #expect(names.isSuperset(of: ["a", "a_2", "a_3", "a_4", "b", "b_2", "b_2000"]) && !names.contains("b_2001"), "\(names.filter { $0.hasPrefix("a") })")
    }

    @Test func jsonlWithKeyColumnNamesSamplesSafely() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let out = dir.appendingPathComponent("shards")
            let objects: [[String: Any]] = [
                ["link": origin.imageURL("small.jpg").absoluteString, "id": "a/b.c", "text": "first", "score": 0.5],
                ["link": origin.imageURL("logo.png").absoluteString, "id": "a/b.c", "text": "same key", "score": 2],
                ["link": origin.imageURL("photo.webp").absoluteString, "id": "../../etc/passwd", "score": NSNull()],
                ["link": origin.imageURL("gone.jpg", query: "status=500").absoluteString, "id": "x", "text": "failed"],
                // A key longer than a tar name allows: cut to 80 characters (the member name stays ≤ 100 bytes).
                ["link": origin.imageURL("thumb-2.jpg").absoluteString, "id": String(repeating: "é", count: 300)],
            ]
            var text = try objects.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
            text.insert("[1, 2]", at: 3)  // not an object: a failed sample with its own key
            let list = dir.appendingPathComponent("list.jsonl")
            try (text.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
            let result = try await Self.fetch([
                "--input", list.path, "--output", out.path, "--output-format", "webdataset", "--shard-size", "100",
                "--url-col", "link", "--key-col", "id", "--caption-col", "text", "--save-cols", "score", "--retries", "0",
            ])
            #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
            let samples = try await Self.read(out)
            let long = String(repeating: "_", count: 80)
            #expect(samples.map(\.key).sorted() == ["0000003", long, "______etc_passwd", "a_b_c", "a_b_c_2", "x"].sorted())
            #expect(samples.first { $0.key == long }?.decoded == [176, 120])
            // The two rows of one key: whichever finished second took the suffix.
            let byURL = Dictionary(samples.map { ($0.json["url"]?.text ?? "", $0) }, uniquingKeysWith: { first, _ in first })
            let first = try #require(byURL[objects[0]["link"] as! String]), second = try #require(byURL[objects[1]["link"] as! String])
            #expect(Set([first.key, second.key]) == ["a_b_c", "a_b_c_2"])
            #expect(first.txt == "first" && second.txt == "same key")
            #expect(first.json["score"]?.text == "0.5" && second.json["score"]?.text == "2")
            let traversal = try #require(byURL[objects[2]["link"] as! String])
            #expect(traversal.key == "______etc_passwd" && traversal.txt == nil)
            #expect(traversal.json["score"] == nil && traversal.decoded == [640, 480])
            let notObject = try #require(samples.first { $0.key == "0000003" })
            #expect(notObject.json["error_message"]?.text == "not a JSON object" && notObject.txt == nil)
            let failed = try #require(samples.first { $0.key == "x" })
            #expect(failed.txt == "failed" && failed.json["status"]?.text == "failed_to_download" && failed.decoded == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).filter { !$0.hasPrefix(".") }.sorted() == ["00000.tar", "00000_stats.json"])
        }
    }

    @Test func tsvWithNamedColumns() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let out = dir.appendingPathComponent("shards")
            let tsv = "TEXT\tURL\n\"tab\tin a caption\"\t\(origin.imageURL("small.jpg"))\nplain, with a comma\t\(origin.imageURL("logo.png"))\n"
            let list = dir.appendingPathComponent("list.tsv")
            try tsv.write(to: list, atomically: true, encoding: .utf8)
            let result = try await Self.fetch([
                "--input", list.path, "--output", out.path, "--output-format", "webdataset", "--url-col", "URL", "--caption-col", "TEXT",
            ])
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            let samples = try await Self.read(out).sorted { $0.key < $1.key }
            #expect(samples.map(\.key) == ["000000000", "000000001"])
            #expect(samples.map(\.txt) == ["tab\tin a caption", "plain, with a comma"])
            #expect(samples.map(\.decoded) == [[120, 80], [256, 256]])
        }
    }

    @Test func aMissingURLColumnIsAClearErrorAtStart() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let list = dir.appendingPathComponent("list.csv")
        try "link,caption\nhttp://127.0.0.1:9/a.jpg,x\n".write(to: list, atomically: true, encoding: .utf8)
        let result = try await Self.fetch(["--input", list.path, "--output", dir.appendingPathComponent("out").path, "--output-format", "webdataset"])
        #expect(result.status == 1)
        #expect((result.stdout + result.stderr).contains("no column \"url\" (its columns: link, caption)"), "\(result.stdout) \(result.stderr)")
        // Refused before anything was fetched or written.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("out").path))?.isEmpty ?? true)
        let jsonl = dir.appendingPathComponent("list.jsonl")
        try "{\"link\": \"http://127.0.0.1:9/a.jpg\"}\n".write(to: jsonl, atomically: true, encoding: .utf8)
        let fromJSON = try await Self.fetch(["--input", jsonl.path, "--output", dir.appendingPathComponent("out").path])
        #expect((fromJSON.stdout + fromJSON.stderr).contains("no column \"url\""), "\(fromJSON.stdout) \(fromJSON.stderr)")
        let saved = try await Self.fetch(["--input", list.path, "--output", dir.path, "--url-col", "link", "--save-cols", "status"])
        #expect(saved.status == 64)
    }
}
