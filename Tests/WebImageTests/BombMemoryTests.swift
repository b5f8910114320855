import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Decompression bombs are refused before anything large is allocated: measured as the peak
/// resident memory of a real `webimage fetch --verify` process (GNU time's `%M`), against the
/// same command on a small ordinary image.
@Suite("Bombs: peak memory of a child process")
struct BombMemoryTests {
    /// Runs `webimage ARGS` under `/usr/bin/time` and returns its exit status, peak RSS in bytes
    /// and what it printed (stdout, then stderr).
    static func peakMemory(_ arguments: [String]) async throws -> (status: Int32, bytes: Int, output: String) {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "maxrss-kb=%M", WebImageCommand.executable.path] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let result: (status: Int32, bytes: Int, output: String) = try await withCheckedThrowingContinuation { continuation in
            let output = PipeReader(out), errors = PipeReader(err)
            process.terminationHandler = { finished in
                let stdout = String(decoding: output.data(), as: UTF8.self)
                let stderr = String(decoding: errors.data(), as: UTF8.self)
                let kilobytes = stderr.split(separator: "\n").last { $0.hasPrefix("maxrss-kb=") }.flatMap { Int($0.dropFirst(10)) } ?? -1
                continuation.resume(returning: (finished.terminationStatus, kilobytes * 1024, stdout + stderr))
            }
            do {
                try process.run()
                output.start()
                errors.start()
            } catch {
                continuation.resume(throwing: error)
            }
        }
        // `webimage` runs under GNU time, with a pid of its own: scripts/tsan finds its report file.
        ChildSanitizerReports.check(result.output, of: ["webimage"] + arguments)
        return result
    }

    @Test func bombsCostNoMoreMemoryThanASmallImage() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
        var files = SampleFiles.standard
        let bombs: [String: Data] = [
            "png-bomb.png": PNGBomb.header(width: 100_000, height: 100_000),
            "jpeg-bomb.jpg": JPEGBomb.header(width: 65_500, height: 65_500),
            "gif-bomb.gif": GIFBomb.header(),
            "gif-frames-bomb.gif": GIFBomb.manyFrames(width: 1000, height: 1000, frames: 60),
            "webp-bomb.webp": try WebPBomb.header(),
        ]
        files.merge(bombs) { $1 }
        try await withOrigin(files: files) { origin in
            let output = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: output) }
            let common = ["fetch", "--verify", "--no-cache", "--concurrency", "1", "--output", output.path]
            let baseline = try await Self.peakMemory(common + [origin.imageURL("small.jpg").absoluteString])
            #expect(baseline.status == 0, "\(baseline.output)")
            #expect(baseline.bytes > 0)
            for name in bombs.keys.sorted() {
                let run = try await Self.peakMemory(common + [origin.imageURL(name).absoluteString])
                // Refused (exit 3: the run finished, its one URL failed), with a typed error and no crash.
                #expect(run.status == 3, "\(name): \(run.output)")
                #expect(run.output.contains("pixel") || run.output.contains("limit"), "\(name): \(run.output)")
                // A decode of even one of these frames would need gigabytes (or 240 MB for the
                // GIF's frames); refusing them costs what a small image costs, within 32 MB.
                #expect(run.bytes < baseline.bytes + 32 << 20, "\(name): peak \(run.bytes >> 20) MB, baseline \(baseline.bytes >> 20) MB")
            }
        }
    }
}
