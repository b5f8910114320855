import Foundation
import Testing
import WebImage
import WebImageOrigin

/// One list fetched as four shards by four `webimage fetch` processes under GNU parallel, into
/// one output folder and one cache folder, then `webimage report merge`d: the merged counts are
/// an unsharded run's, no shard replaced another's file, and a resumed shard counts once.
extension HeavyTests {
    @Suite("webimage fetch --shard under GNU parallel, and report merge")
    struct FetchShardMergeTests {
        struct Summary: Decodable, Equatable {
            var requested: Int, succeeded: Int, failed: Int, invalid: Int, duplicates: Int, skipped: Int
        }
        struct ManifestLine: Decodable { var url: String; var file: String; var bytes: Int }

        /// 32 images that all want the name `small.jpg` (so shards race for names), 4 missing ones,
        /// 3 repeated lines and 1 line that is no URL.
        static func list(_ origin: ImageOrigin) -> String {
            var lines = (0..<32).map { origin.url("/answer/small.jpg?copy=\($0)").absoluteString }
            lines += (0..<4).map { origin.url("/images/missing-\($0).jpg").absoluteString }
            lines += [lines[3], lines[17], lines[33], "not a url"]
            return lines.joined(separator: "\n") + "\n"
        }

        static func summary(_ text: String) throws -> Summary {
            let line = try #require(text.split(separator: "\n").last { $0.hasPrefix("{") })
            return try JSONDecoder().decode(Summary.self, from: Data(line.utf8))
        }

        @Test func fourShardsMergeIntoTheUnshardedRunsCounts() async throws {
            try await withOrigin { origin in
                let work = temporaryDirectory()
                let listFile = work.appendingPathComponent("list.txt")
                try Self.list(origin).write(to: listFile, atomically: true, encoding: .utf8)

                let single = try await WebImageCommand.run([
                    "fetch", "--input", listFile.path, "--output", work.appendingPathComponent("single").path,
                    "--cache-dir", work.appendingPathComponent("cache-single").path, "--json"])
                let expected = try Self.summary(single.stdout)
                #expect(expected == Summary(requested: 40, succeeded: 32, failed: 5, invalid: 1, duplicates: 3, skipped: 0), "\(single.stdout)")

                let out = work.appendingPathComponent("sharded"), cache = work.appendingPathComponent("cache-sharded")
                let parallel = try await WebImageCommand.run(
                    ["--will-cite", "-j4", WebImageCommand.executable.path, "fetch", "--input", listFile.path,
                     "--shard", "{}/4", "--output", out.path, "--cache-dir", cache.path, "--max-failure-rate", "0.9",
                     "--jsonl", out.path + "/run-{}.jsonl", "--json", ":::", "1", "2", "3", "4"],
                    program: URL(fileURLWithPath: "/usr/bin/parallel"))
                // parallel exits with the number of shares that failed: none, though each has failed lines.
                #expect(parallel.status == 0, "\(parallel.stdout) \(parallel.stderr)")
                #expect(parallel.stderr.isEmpty || !parallel.stderr.contains("rror"), "\(parallel.stderr)")
                let runs = (1...4).map { out.path + "/run-\($0).jsonl" }
                for run in runs { #expect(FileManager.default.fileExists(atPath: run), "\(run)") }

                let merged = try await WebImageCommand.run(["report", "merge"] + runs + ["--json", "--report", work.path + "/all.html"])
                #expect(merged.status == 0, "\(merged.stderr)")
                #expect(try Self.summary(merged.stdout) == expected, "\(merged.stdout)")
                let html = try String(contentsOfFile: work.path + "/all.html", encoding: .utf8)
                #expect(html.contains(#"<dd id="count-succeeded">32</dd>"#))
                #expect(html.components(separatedBy: "<img src=\"data:image/webp").count - 1 == 32, "a thumbnail per image written")

                // Four processes appended to one manifest and raced for one name: every image has a
                // file of its own, whole, recorded once.
                let manifest = try String(contentsOf: out.appendingPathComponent(".webimage-fetch.jsonl"), encoding: .utf8)
                    .split(separator: "\n").map { try JSONDecoder().decode(ManifestLine.self, from: Data($0.utf8)) }
                #expect(manifest.count == 32 && Set(manifest.map(\.file)).count == 32 && Set(manifest.map(\.url)).count == 32)
                for line in manifest {
                    let size = try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent(line.file).path)[.size] as? Int
                    #expect(size == line.bytes && size == SampleFiles.standard["small.jpg"]?.count, "\(line.file)")
                }

                // Shard 2 run again with --skip-existing: its lines count once, as the first run's.
                let again = try await WebImageCommand.run([
                    "fetch", "--input", listFile.path, "--shard", "2/4", "--output", out.path, "--cache-dir", cache.path,
                    "--skip-existing", "--jsonl", out.path + "/run-2-again.jsonl", "--json"])
                #expect(try Self.summary(again.stdout).skipped > 0, "\(again.stdout)")
                let remerged = try await WebImageCommand.run(["report", "merge"] + runs + [out.path + "/run-2-again.jsonl", "--json"])
                #expect(try Self.summary(remerged.stdout) == expected, "\(remerged.stdout)")

                // Lines that are not records are left out and said so; a missing file is an error.
                let torn = work.appendingPathComponent("torn.jsonl")
                try (try String(contentsOfFile: runs[0], encoding: .utf8) + "{\"line\": 9, \"url\n").write(to: torn, atomically: true, encoding: .utf8)
                let withTorn = try await WebImageCommand.run(["report", "merge", torn.path] + runs.dropFirst() + ["--json"])
                #expect(try Self.summary(withTorn.stdout) == expected && withTorn.stderr.contains("1 line was not a fetch record"))
                let missing = try await WebImageCommand.run(["report", "merge", work.path + "/nothing.jsonl"])
                #expect(missing.status != 0 && missing.stderr.contains("cannot read"))
            }
        }

        @Test func webdatasetSharesWriteShardsOfTheirOwnNamesIntoOneFolder() async throws {
            try await withOrigin { origin in
                let work = temporaryDirectory()
                let listFile = work.appendingPathComponent("list.txt")
                try Self.list(origin).write(to: listFile, atomically: true, encoding: .utf8)
                let out = work.appendingPathComponent("wds")
                let parallel = try await WebImageCommand.run(
                    ["--will-cite", "-j4", WebImageCommand.executable.path, "fetch", "--no-cache", "--input", listFile.path,
                     "--shard", "{}/4", "--output", out.path, "--output-format", "webdataset", "--shard-size", "4", "--max-failure-rate", "0.9",
                     "--jsonl", work.path + "/run-{}.jsonl", ":::", "1", "2", "3", "4"],
                    program: URL(fileURLWithPath: "/usr/bin/parallel"))
                #expect(parallel.status == 0, "\(parallel.stdout) \(parallel.stderr)")
                let tars = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".tar") }
                #expect(Set(tars.map { $0.prefix(2) }) == ["1-", "2-", "3-", "4-"], "\(tars.sorted())")
                let samples = try await FetchDatasetTests.read(out)
                // Every input line that is not a repeat is a sample (failures carry their error); keys are unique.
                let merged = try await WebImageCommand.run(["report", "merge"] + (1...4).map { work.path + "/run-\($0).jsonl" } + ["--json"])
                let summary = try Self.summary(merged.stdout)
                // As img2dataset, webdataset output keeps repeated lines (two of the repeats are images).
                #expect(summary.succeeded == 34)
                #expect(samples.filter { $0.decoded != nil }.count == 34)
                #expect(Set(samples.map(\.key)).count == samples.count, "keys are unique across shares")
                // A share run again into the folder is refused before fetching (its names are taken); another share's are not in the way.
                let again = try await WebImageCommand.run([
                    "fetch", "--no-cache", "--input", listFile.path, "--shard", "2/4", "--output", out.path, "--output-format", "webdataset"])
                #expect(again.status != 0 && (again.stdout + again.stderr).contains("holds webdataset shards already (2-00000.tar)"))
            }
        }

        /// The deploy examples (docs/SCALE.md) use only options `webimage fetch` has.
        @Test func theDeployExamplesUseOnlyOptionsFetchHas() async throws {
            let help = try await WebImageCommand.run(["fetch", "--help"])
            #expect(help.status == 0)
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            for file in ["deploy/kubernetes/fetch-indexed-job.yaml", "deploy/slurm/fetch-array.sbatch"] {
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                // The command: from `exec webimage fetch` to the end of its continued lines.
                let start = try #require(text.range(of: "exec webimage fetch "), "\(file)")
                var command = ""
                for line in text[start.lowerBound...].split(separator: "\n") {
                    command += line
                    if !line.hasSuffix("\\") { break }
                }
                let options = command.split(whereSeparator: { $0 == " " || $0 == "\\" }).filter { $0.hasPrefix("--") }
                #expect(options.count >= 5, "\(file): \(command)")
                for option in options { #expect(help.stdout.contains(String(option) + " "), "\(file): \(option) is not a fetch option") }
                #expect(command.contains("--shard"), "\(file)")
            }
        }
    }
}
