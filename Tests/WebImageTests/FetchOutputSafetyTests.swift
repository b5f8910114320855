import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
/// `webimage fetch` never replaces a file in its output folder: names a killed run recorded are
/// reserved when it is resumed, a final rename refuses to replace, and a killed run's temporary
/// files are cleaned up — with the real binary against the real origin.
@Suite("webimage fetch: no file is ever replaced")
struct FetchOutputSafetyTests {
    @Test func resumingAKilledRunWithCollidingNamesKeepsEveryFile() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let output = dir.appendingPathComponent("out")
            // Every URL is named pic.jpg, pic-1.jpg, …: the names collide by construction.
            let urls = (1...12).map { origin.imageURL("thumb-\($0).jpg", query: "delay=300").absoluteString }
            let common = ["--output", output.path, "--no-cache", "--name", "pic.{ext}"]
            let child = try ChildProcess(["fetch", "--input", try FetchListTests.write(urls, in: dir).path, "--concurrency", "2"] + common)
            let manifest = output.appendingPathComponent(".webimage-fetch.jsonl")
            #expect(await eventually(timeout: .seconds(30)) { ((try? String(contentsOf: manifest, encoding: .utf8)) ?? "").split(separator: "\n").count >= 3 })
            child.signal(SIGKILL)
            _ = await child.exit()
            let kept = try Self.manifest(manifest)
            #expect(kept.count >= 3 && kept.count < 12)
            // What a killed run leaves (its temporary file), and a file of the user's under a name
            // the run has not used yet.
            let stale = output.appendingPathComponent(".pic-9.jpg.partial-\(child.pid)-12345")
            try Data("half a file".utf8).write(to: stale)
            let usersFile = output.appendingPathComponent("pic-\(kept.count).jpg")
            try Data("the user's own file".utf8).write(to: usersFile)

            // Resumed with the list reversed: the URLs not fetched yet come first and would take
            // the names of the kept files if those were not reserved.
            let jsonl = dir.appendingPathComponent("resume.jsonl")
            let reversed = try FetchListTests.write(urls.reversed(), in: dir)
            let resumed = try await WebImageCommand.run(["fetch", "--input", reversed.path, "--concurrency", "4", "--skip-existing", "--jsonl", jsonl.path] + common)
            #expect(resumed.status == 0, "\(resumed.stdout)")
            let lines = try FetchListTests.records(jsonl)
            #expect(Set(lines.filter { $0.status == "skipped" }.map(\.url)) == Set(kept.keys))
            #expect(lines.filter { $0.status == "ok" }.count == 12 - kept.count)

            // Every URL's file holds that URL's image; the user's file and no other was touched.
            let files = try Self.manifest(manifest)
            #expect(files.count == 12)
            for (index, url) in urls.enumerated() {
                let file = try #require(files[url], "\(url) has no file")
                #expect(try Data(contentsOf: output.appendingPathComponent(file)) == SampleFiles.standard["thumb-\(index + 1).jpg"], "\(file) for \(url)")
            }
            #expect(Set(files.values).count == 12)
            #expect(try Data(contentsOf: usersFile) == Data("the user's own file".utf8))
            #expect(!files.values.contains(usersFile.lastPathComponent))
            let names = try FileManager.default.contentsOfDirectory(atPath: output.path)
            #expect(!names.contains { $0.contains(".partial-") }, "\(names)")
        }
    }

    /// The manifest is opened only as a regular file of its own (red team, stop 53): a symbolic
    /// link planted under its name in a shared output folder made a run append the list's text to
    /// the file it named (a `~/.bashrc`), and a FIFO hung the run at start. Both are refused.
    @Test(arguments: [false, true])
    func aManifestThatIsALinkOrAFIFOIsRefused(fifo: Bool) async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let output = dir.appendingPathComponent("out"), canary = dir.appendingPathComponent("canary")
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            try Data("untouched\n".utf8).write(to: canary)
            let manifest = output.appendingPathComponent(".webimage-fetch.jsonl")
            if fifo {
                #expect(mkfifo(manifest.path, 0o644) == 0)
            } else {
                try FileManager.default.createSymbolicLink(at: manifest, withDestinationURL: canary)
            }
            for resume in [[], ["--skip-existing"]] {
                let result = try await WebImageCommand.run(
                    ["fetch", origin.imageURL("thumb-1.jpg").absoluteString, "--output", output.path, "--no-cache"] + resume)
                #expect(result.status != 0 && result.stderr.contains(".webimage-fetch.jsonl"), "\(resume): \(result.status) \(result.stderr)")
            }
            #expect(try String(contentsOf: canary, encoding: .utf8) == "untouched\n")
        }
    }

    /// A name a URL chooses cannot pass for an option or hide its extension (red team, stop 53):
    /// a leading `-` and Unicode format characters (`U+202E` showed `gnp.exe` as `exe.png`)
    /// become `_`.
    @Test func namesNeitherStartWithADashNorHoldBidiControls() async throws {
        let image = SampleFiles.standard["logo.png"]!
        try await withOrigin(files: ["-rf.png": image, "%E2%80%AEgnp.exe.png": image]) { origin in
            let output = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: output) }
            let urls = [origin.url("/images/-rf.png").absoluteString, origin.url("/images/%E2%80%AEgnp.exe.png").absoluteString]
            let result = try await WebImageCommand.run(["fetch"] + urls + ["--output", output.path, "--no-cache"])
            #expect(result.status == 0, "\(result.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { !$0.hasPrefix(".") }.sorted()
            #expect(names == ["_gnp.exe.png", "_rf.png"], "\(names)")
        }
    }

    @Test func aLineOverTheLimitIsInvalidAndNeverHeldInMemory() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let first = origin.imageURL("small.jpg").absoluteString, after = origin.imageURL("logo.png").absoluteString
            let jsonl = dir.appendingPathComponent("out.jsonl")
            // 256 MB without a newline between two good URLs, streamed.
            let run = try await StreamedInput.run(
                ["fetch", "--input", "-", "--output", dir.appendingPathComponent("out").path, "--no-cache", "--jsonl", jsonl.path],
                head: "\(first)\n", megabytes: 256, tail: "\n\(after)\n"
            ) { origin.requestCount(path: "/images/logo.png") == 1 }
            #expect(run.conditionMet)
            #expect(run.status == 3)  // one invalid line
            let peakKB = try #require(run.peakBytes, "no VmHWM") / 1024
            #expect(peakKB < 128 * 1024, "the process peaked at \(peakKB) KB reading a 256 MB line")
            let lines = try FetchListTests.records(jsonl).sorted { $0.line < $1.line }
            #expect(lines.map(\.status) == ["ok", "invalid", "ok"])
            #expect(lines.map(\.line) == [1, 2, 3])
            #expect(lines[1].error?.contains("longer than 65536 bytes") == true, "\(lines[1])")
            #expect(lines[1].url.count < 100)
        }
    }

    /// The manifest's files by URL (the last line of a URL counts; a torn line is skipped).
    /// A resumed run whose index could not go in the output folder puts it in the system's
    /// temporary folder; a killed run's index there was never removed (#30). Every run now
    /// removes such files of runs that are gone, and only those: not a live run's, not another
    /// program's file in the shared folder.
    @Test func aKilledRunsIndexInTheTemporaryFolderIsRemoved() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let temporary = dir.appendingPathComponent("tmp")
            try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
            let ended = try ChildProcess(["--help"])  // a process that has ended: its pid is free
            _ = await ended.exit()
            let dead = temporary.appendingPathComponent(".webimage-fetch-index.sqlite.partial-\(ended.pid)-1")
            let live = temporary.appendingPathComponent(".webimage-fetch-index.sqlite.partial-\(getpid())-2")
            let others = temporary.appendingPathComponent(".someone-else.partial-\(ended.pid)-3")
            for file in [dead, live, others] { try Data("x".utf8).write(to: file) }
            let run = try await WebImageCommand.run(
                ["fetch", origin.imageURL("small.jpg").absoluteString, "--output", dir.appendingPathComponent("out").path, "--no-cache", "--skip-existing"],
                environment: ["TMPDIR": temporary.path])
            #expect(run.status == 0, "\(run.stderr)")
            let left = Set(try FileManager.default.contentsOfDirectory(atPath: temporary.path))
            #expect(left == [live.lastPathComponent, others.lastPathComponent], "\(left)")
        }
    }

    static func manifest(_ path: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for line in try String(contentsOf: path, encoding: .utf8).split(separator: "\n") {
            guard let entry = try? JSONDecoder().decode(ManifestLine.self, from: Data(line.utf8)) else { continue }
            files[entry.url] = entry.file
        }
        return files
    }
}
}
