import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("The webimage command against the test origin")
struct CommandLineTests {
    struct Summary: Decodable {
        struct Failure: Decodable { var url: String; var error: String }
        var requested, succeeded, failed, fromMemory, fromDisk, fromNetwork, bytes: Int
        var seconds: Double
        var failures: [Failure]
    }

    @Test func fetchWritesOriginalBytesAndReportsJSON() async throws {
        try await withOrigin { origin in
            let output = temporaryDirectory(), cache = temporaryDirectory()
            let urls = ["photo.jpg", "logo.png", "small.jpg"].map { origin.imageURL($0).absoluteString }
            let result = try await WebImageCommand.run(
                ["fetch"] + urls + ["--output", output.path, "--cache-dir", cache.path, "--json", "--concurrency", "2"])
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8))
            #expect(summary.requested == 3 && summary.succeeded == 3 && summary.failed == 0)
            #expect(summary.fromNetwork == 3)
            let expectedBytes = ["photo.jpg", "logo.png", "small.jpg"].map { SampleFiles.standard[$0]!.count }.reduce(0, +)
            #expect(summary.bytes == expectedBytes)
            #expect(try Data(contentsOf: output.appendingPathComponent("photo.jpg")) == SampleFiles.standard["photo.jpg"])
            #expect(try Data(contentsOf: output.appendingPathComponent("logo.png")) == SampleFiles.standard["logo.png"])

            // Second run over the same cache: every image from disk, no new origin requests.
            let before = origin.contentRequests.count
            let again = try await WebImageCommand.run(
                ["fetch"] + urls + ["--output", temporaryDirectory().path, "--cache-dir", cache.path, "--json"])
            let second = try JSONDecoder().decode(Summary.self, from: Data(again.stdout.utf8))
            #expect(second.fromDisk == 3 && second.fromNetwork == 0)
            #expect(origin.contentRequests.count == before, "robots.txt aside (asked once a run)")
        }
    }

    @Test func fetchNamesCollisionsAndMissingExtensionsAndReadsStdin() async throws {
        try await withOrigin(files: ["a.jpg": SampleFiles.standard["small.jpg"]!, "noext": SampleFiles.standard["logo.png"]!]) { origin in
            let output = temporaryDirectory()
            let input = [
                origin.imageURL("a.jpg").absoluteString,
                origin.imageURL("a.jpg", query: "v=2").absoluteString,
                origin.imageURL("noext").absoluteString,
            ].joined(separator: "\n")
            let result = try await WebImageCommand.run(
                ["fetch", "--input", "-", "--output", output.path, "--cache-dir", temporaryDirectory().path], stdin: input)
            #expect(result.status == 0, "\(result.stderr)")
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: output.path).filter { !$0.hasPrefix(".") })  // not the resume manifest
            #expect(names == ["a.jpg", "a-1.jpg", "noext.png"])
            #expect(result.stdout.contains("3 requested, 3 succeeded, 0 failed"))
        }
    }

    @Test func fetchExitsThreeAndListsFailures() async throws {
        try await withOrigin { origin in
            let bad = origin.imageURL("missing.jpg").absoluteString
            let result = try await WebImageCommand.run(
                ["fetch", origin.imageURL("small.jpg").absoluteString, bad, "not a url",
                 "--output", temporaryDirectory().path, "--cache-dir", temporaryDirectory().path, "--json"])
            #expect(result.status == 3)
            let summary = try JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8))
            #expect(summary.succeeded == 1 && summary.failed == 2)
            #expect(summary.failures.contains { $0.url == bad && $0.error.contains("404") })
        }
    }

    @Test func infoReportsURLsAndFiles() async throws {
        try await withOrigin { origin in
            let result = try await WebImageCommand.run(["info", origin.imageURL("landscape.jpg").absoluteString, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            struct Info: Decodable { var format: String; var width, height, frames, bytes: Int }
            let info = try JSONDecoder().decode(Info.self, from: Data(result.stdout.utf8))
            #expect(info.format == "jpeg" && info.width == 1600 && info.height == 900 && info.frames == 1)
            #expect(info.bytes == SampleFiles.standard["landscape.jpg"]!.count)

            let file = temporaryDirectory().appendingPathComponent("logo.png")
            try SampleFiles.standard["logo.png"]!.write(to: file)
            let local = try await WebImageCommand.run(["info", file.path, "--json"])
            let png = try JSONDecoder().decode(Info.self, from: Data(local.stdout.utf8))
            #expect(png.format == "png" && png.width == 256 && png.height == 256)
        }
    }

    @Test(arguments: ["empty", "text", "truncated", "bomb"])
    func infoFailsCleanlyOnBadInput(kind: String) async throws {
        let file = temporaryDirectory().appendingPathComponent("bad.jpg")
        let data: Data = switch kind {
        case "empty": Data()
        case "text": Data("plain text, named .jpg\n".utf8)
        case "truncated": SampleFiles.standard["photo.jpg"]!.prefix(500)
        default: PNGBomb.header(width: 100_000, height: 100_000)
        }
        try data.write(to: file)
        // Header-only reading accepts a bomb's header (info works over the pixel limit); decoding refuses it.
        let result = try await WebImageCommand.run(["info", file.path] + (kind == "bomb" ? ["--decode"] : []))
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("webimage info:") == true)
    }

    @Test func infoOnADirectoryAndFetchIntoAnUncreatableDirectoryFailCleanly() async throws {
        let directory = temporaryDirectory()
        let info = try await WebImageCommand.run(["info", directory.path])
        #expect(info.status == 1)
        #expect(info.stderr == "webimage info: \(directory.path): is a directory, not an image file\n")

        let file = directory.appendingPathComponent("plain-file")
        try Data([1]).write(to: file)
        let fetch = try await WebImageCommand.run(
            ["fetch", "http://127.0.0.1:1/a.jpg", "--output", file.appendingPathComponent("out").path, "--cache-dir", temporaryDirectory().path])
        #expect(fetch.status != 0)
        #expect(fetch.stderr.contains("cannot create the output directory"))
    }

    @Test func cacheStatsAndClear() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            _ = try await WebImageCommand.run(
                ["fetch", origin.imageURL("small.jpg").absoluteString, "--output", temporaryDirectory().path, "--cache-dir", cache.path])
            let stats = try await WebImageCommand.run(["cache", "stats", "--cache-dir", cache.path, "--json"])
            #expect(stats.stdout.contains("\"count\":1"))
            let clear = try await WebImageCommand.run(["cache", "clear", "--cache-dir", cache.path])
            #expect(clear.status == 0 && clear.stdout.contains("removed 1"))
            let after = try await WebImageCommand.run(["cache", "stats", "--cache-dir", cache.path, "--json"])
            #expect(after.stdout.contains("\"count\":0"))
        }
    }

    @Test func defaultCacheDirectoryFollowsXDG() async throws {
        let xdg = temporaryDirectory()
        let result = try await WebImageCommand.run(["cache", "stats", "--json"], environment: ["XDG_CACHE_HOME": xdg.path])
        #expect(result.stdout.contains(xdg.appendingPathComponent("webimage").path))
    }

    @Test func demoRunsColdThenCached() async throws {
        let output = temporaryDirectory()
        let result = try await WebImageCommand.run(["demo", "--output", output.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("images written to \(output.path)"))
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path)
        #expect(written.count == SampleFiles.standard.count)
    }
}
