import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `webimage fetch` over lists: bad lines, duplicates, shards, resuming, JSON lines, names,
/// per-host limits, retries, timeouts, Ctrl-C, and write failures — each against the real
/// origin with the real binary.
@Suite("webimage fetch: lists, shards, resume, interrupts")
struct FetchListTests {
    static func records(_ path: URL) throws -> [FetchLine] {
        try String(contentsOf: path, encoding: .utf8).split(separator: "\n").map { try JSONDecoder().decode(FetchLine.self, from: Data($0.utf8)) }
    }

    static func write(_ lines: [String], in directory: URL) throws -> URL {
        let file = directory.appendingPathComponent("urls.txt")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func badLinesAreReportedWithTheirNumbersAndTheRestIsFetched() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let small = origin.imageURL("small.jpg").absoluteString
            // A URL of over 8 KB is refused before anything reads it (a host's robots.txt rules
            // cost its length each: 4,000 rules against 60 KB paths took 5 s a line).
            let long = origin.imageURL("small.jpg", query: "q=" + String(repeating: "a", count: 8200)).absoluteString
            let list = try Self.write(["# a comment", small, "", "ftp://example.invalid/a.jpg", "not a url", small, origin.imageURL("logo.png").absoluteString, long], in: dir)
            let jsonl = dir.appendingPathComponent("out.jsonl")
            let result = try await WebImageCommand.run([
                "fetch", "--input", list.path, "--output", dir.appendingPathComponent("out").path, "--no-cache", "--jsonl", jsonl.path,
            ])
            #expect(result.status == 3)
            #expect(result.stdout.contains("line 4: ftp://example.invalid/a.jpg: not an http(s) URL"))
            #expect(result.stdout.contains("line 5: not a url"))
            let lines = try Self.records(jsonl)
            #expect(lines.map(\.status).sorted() == ["duplicate", "invalid", "invalid", "invalid", "ok", "ok"])
            #expect(lines.first { $0.line == 8 }?.error?.contains("a URL of over 8192 bytes") == true, "\(lines.map(\.error))")
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)
            #expect(lines.first { $0.status == "duplicate" }?.line == 6)
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)
            let ok = try #require(lines.first { $0.url == small && $0.status == "ok" })
            #expect(ok.file == "small.jpg" && ok.format == "jpg" && ok.width == 120 && ok.height == 80)
            #expect(ok.bytes == SampleFiles.standard["small.jpg"]!.count && ok.source == "network" && ok.ms != nil)
            // Without bad lines the exit status is 0; usage errors are 64.
            let clean = try await WebImageCommand.run(["fetch", small, "--output", dir.appendingPathComponent("clean").path, "--no-cache"])
            #expect(clean.status == 0)
            #expect(try await WebImageCommand.run(["fetch", small, "--output", dir.path, "--shard", "3/2"]).status == 64)
            #expect(try await WebImageCommand.run(["fetch", small, "--output", dir.path, "--name", "fixed.jpg"]).status == 64)
        }
    }

    @Test func shardsSplitAListWithoutOverlapOrLoss() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let urls = origin.imageNames.map { origin.imageURL($0).absoluteString } + (0..<30).map { origin.imageURL("small.jpg", query: "n=\($0)").absoluteString }
            let list = try Self.write(urls, in: dir)
            var fetched: [String] = []
            for k in 1...3 {
                let jsonl = dir.appendingPathComponent("shard-\(k).jsonl")
                let result = try await WebImageCommand.run([
                    "fetch", "--input", list.path, "--output", dir.appendingPathComponent("out-\(k)").path, "--no-cache",
                    "--shard", "\(k)/3", "--jsonl", jsonl.path, "--name", "{hash}.{ext}",
                ])
                #expect(result.status == 0, "\(result.stdout)")
                let lines = try Self.records(jsonl)
                #expect(!lines.isEmpty, "shard \(k) got nothing of \(urls.count)")
                fetched += lines.map(\.url)
            }
            #expect(fetched.count == urls.count)
            #expect(Set(fetched) == Set(urls))
        }
    }

    @Test func skipExistingResumesAKilledRun() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let output = dir.appendingPathComponent("out")
            let list = try Self.write((1...12).map { origin.imageURL("thumb-\($0).jpg", query: "delay=300").absoluteString }, in: dir)
            let arguments = ["fetch", "--input", list.path, "--output", output.path, "--no-cache", "--concurrency", "2"]
            let child = try ChildProcess(arguments)
            let manifest = output.appendingPathComponent(".webimage-fetch.jsonl")
            #expect(await eventually(timeout: .seconds(30)) { ((try? String(contentsOf: manifest, encoding: .utf8)) ?? "").split(separator: "\n").count >= 3 })
            child.signal(SIGKILL)
            _ = await child.exit()
            let done = Set(try String(contentsOf: manifest, encoding: .utf8).split(separator: "\n")
                .compactMap { try? JSONDecoder().decode(ManifestLine.self, from: Data($0.utf8)).url })
            #expect(done.count >= 3 && done.count < 12)
            // Requests of the killed run may still be logged as their handlers end (the kernel
            // hands over what the killed process had sent): wait until the log is quiet for
            // 300 ms, then count by arrival.
            var seen = origin.requests.count
            while true {
                try await Task.sleep(for: .milliseconds(300))
                let now = origin.requests.count
                if now == seen { break }
                seen = now
            }
            let resumedFrom = ContinuousClock.now
            let jsonl = dir.appendingPathComponent("resume.jsonl")
            let resumed = try await WebImageCommand.run(arguments + ["--skip-existing", "--jsonl", jsonl.path])
            #expect(resumed.status == 0, "\(resumed.stdout)")
            let lines = try Self.records(jsonl)
            #expect(Set(lines.filter { $0.status == "skipped" }.map(\.url)) == done)
            #expect(lines.filter { $0.status == "ok" }.count == 12 - done.count)
            #expect(origin.contentRequests.filter { $0.arrivedAt >= resumedFrom }.count == 12 - done.count)
            for index in 1...12 {
                let file = output.appendingPathComponent("thumb-\(index).jpg")
                #expect(try Data(contentsOf: file) == SampleFiles.standard["thumb-\(index).jpg"])
            }
        }
    }

    @Test func ctrlCStopsCleanlyWithASummaryAndExit130() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let output = dir.appendingPathComponent("out")
            let list = try Self.write((0..<40).map { origin.url("/images/photo.jpg?n=\($0)&chunk=4000&stall=40").absoluteString }, in: dir)
            let child = try ChildProcess(["fetch", "--input", list.path, "--output", output.path, "--no-cache", "--concurrency", "4", "--max-failure-rate", "1"])
            #expect(await eventually(timeout: .seconds(30)) { origin.bytesSent(path: "/images/photo.jpg") > 0 })
            child.signal(SIGINT)
            let (status, stdout) = await child.exit()
            #expect(status == 130)
            #expect(stdout.contains("interrupted"), "\(stdout)")
            // Only complete files under final names; no temporary files left behind.
            let photo = try #require(SampleFiles.standard["photo.jpg"])
            let names = try FileManager.default.contentsOfDirectory(atPath: output.path)
            #expect(!names.contains { $0.contains(".partial-") })
            for name in names where !name.hasPrefix(".") {
                #expect(try Data(contentsOf: output.appendingPathComponent(name)) == photo, "\(name) is incomplete")
            }
            #expect(names.filter { !$0.hasPrefix(".") }.count < 40)
        }
    }

    @Test func perHostRetriesTimeoutAndNameTemplates() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let slow = (0..<6).map { origin.imageURL("small.jpg", query: "delay=150&n=\($0)").absoluteString }
            let limited = try await WebImageCommand.run(["fetch"] + slow + ["--output", dir.appendingPathComponent("a").path, "--no-cache", "--concurrency", "6", "--per-host", "2"])
            #expect(limited.status == 0)
            #expect(origin.maxConcurrentRequests <= 2)
            // Six URLs with one file name: collisions get -1, -2, …
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("a").path).filter { !$0.hasPrefix(".") }.sorted()
            #expect(names == ["small-1.jpg", "small-2.jpg", "small-3.jpg", "small-4.jpg", "small-5.jpg", "small.jpg"])

            let flaky = origin.url("/flaky/small.jpg?fails=2&failStatus=503").absoluteString
            let retried = try await WebImageCommand.run(["fetch", flaky, "--output", dir.appendingPathComponent("b").path, "--no-cache", "--retries", "2", "--name", "{index}-{basename}.{ext}"])
            #expect(retried.status == 0, "\(retried.stdout)")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("b/1-small.jpg").path))
            #expect(origin.requestCount(path: "/flaky/small.jpg") == 3)

            let started = ContinuousClock.now
            let timedOut = try await WebImageCommand.run(["fetch", origin.imageURL("small.jpg", query: "delay=8000").absoluteString, "--output", dir.path, "--no-cache", "--timeout", "0.5", "--retries", "0"])
            #expect(timedOut.status == 3 && timedOut.stdout.contains("timed out"))
            #expect(ContinuousClock.now - started < .seconds(6))  // the answer would take 8 s
        }
    }

    @Test func writeFailuresLeaveNoPartialFiles() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            // The output folder's parent is a file: the folder cannot be made.
            let blocker = dir.appendingPathComponent("file")
            try Data("x".utf8).write(to: blocker)
            let unmakeable = try await WebImageCommand.run(["fetch", origin.imageURL("small.jpg").absoluteString, "--output", blocker.appendingPathComponent("out").path])
            #expect(unmakeable.status != 0 && unmakeable.stderr.contains("cannot create the output directory"))
            // A full disk: the output folder is a 64 KB tmpfs, mounted in a mount namespace of the
            // child's own (`unshare`, root or an unprivileged user namespace). The small image is
            // written, the 105 KB one fails with a clear error and leaves nothing; the folder is
            // listed inside the namespace, since the tmpfs ends with it.
            let output = dir.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            let command = [WebImageCommand.executable.path, "fetch", origin.imageURL("small.jpg").absoluteString,
                           origin.imageURL("logo.png").absoluteString, "--output", output.path, "--no-cache"]
            let (status, stdout) = try await FullDisk.run(command + ["--max-failure-rate", "1"], output: output)
            #expect(status == 1, "an image not written is an error whatever the rate: \(stdout)")
            #expect(stdout.contains("cannot write logo.png: No space left on device"), "\(stdout)")
            #expect(stdout.contains("files: small.jpg \n"), "only the image that fitted, no partial file: \(stdout)")
        }
    }
}

/// One line of the output folder's resume manifest.
struct ManifestLine: Decodable {
    var url: String
    var file: String
    var bytes: Int
}

/// One line of `--jsonl`, as the tests read it.
struct FetchLine: Decodable {
    var line: Int
    var url: String
    var status: String
    var file: String?
    var format: String?
    var width: Int?
    var height: Int?
    var bytes: Int?
    var ms: Double?
    var source: String?
    var error: String?
}

/// A `webimage` (or other) process the test can signal while it runs.
///
/// `@unchecked Sendable`: `Process` is not marked Sendable; after `run()` this class only reads
/// its identifier and waits on it, which Foundation allows from any thread.
final class ChildProcess: @unchecked Sendable {
    private let process: TestProcess
    private let output: Pipe
    private let errors: Pipe?

    /// With `separateErrors`, standard error is read apart from standard output (``exitSeparately()``).
    init(_ arguments: [String], executable: String? = nil, separateErrors: Bool = false) throws {
        let process = TestProcess()
        process.executableURL = executable.map { URL(fileURLWithPath: $0) } ?? WebImageCommand.executable
        process.arguments = arguments
        let output = Pipe(), errors = separateErrors ? Pipe() : nil
        process.standardOutput = output
        process.standardError = errors ?? output
        try process.run()
        self.process = process
        self.output = output
        self.errors = errors
    }

    /// Waits for the end; returns the status, standard output and standard error (read at the same time).
    func exitSeparately() async -> (Int32, String, String) {
        let result: (Int32, String, String) = await withCheckedContinuation { continuation in
            // Threads of their own: blocking reads on Dispatch's global queues take threads the
            // tests' cooperative pool needs.
            Thread.detachNewThread { [process, output, errors] in
                let collected = Recorder<Data>()
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    collected.append(errors?.fileHandleForReading.readDataToEndOfFile() ?? Data())
                    done.signal()
                }
                let stdout = output.fileHandleForReading.readDataToEndOfFile()
                done.wait()
                let stderr = collected.all.first ?? Data()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)))
            }
        }
        ChildSanitizerReports.check(result.2, pid: process.processIdentifier, of: command)
        return result
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    var pid: pid_t { process.processIdentifier }

    /// Waits for the process to end (off the cooperative pool) and returns its status and output.
    func exit() async -> (Int32, String) {
        let result: (Int32, String) = await withCheckedContinuation { continuation in
            Thread.detachNewThread { [process, output] in
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, text))
            }
        }
        ChildSanitizerReports.check(result.1, pid: pid, of: command)  // stderr is in `output` unless separated
        return result
    }

    /// How the child was started, for messages.
    private var command: [String] { [process.executableURL?.lastPathComponent ?? ""] + (process.arguments ?? []) }
}
