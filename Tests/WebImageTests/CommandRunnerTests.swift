import Foundation
import Testing
import WebImageOrigin

/// The runner the CLI tests start `webimage` with.
@Suite("Running webimage as a child process")
struct CommandRunnerTests {
    /// A child that prints more than a pipe holds (64 KB) finishes, and every byte arrives. The
    /// runner used to read the pipes only after the child exited: the child then blocked on
    /// its write forever (Thread Sanitizer's reports on stderr did that to a `fetch` test).
    @Test(.timeLimit(.minutes(1)))
    func outputLargerThanAPipeHoldsDoesNotHang() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: cache) }
            // A photo 200 columns wide in 24-bit colour half-blocks: far more than 64 KB.
            let result = try await WebImageCommand.run([
                "show", "--protocol", "blocks", "--width", "200", "--cache-dir", cache.path, origin.imageURL("photo.webp").absoluteString,
            ])
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.utf8.count > 64 * 1024)
            let screen = CapturedScreen(result.stdout)
            #expect(screen[0, 199] != nil, "the last column of the first row arrived")
        }
    }

    /// Under `scripts/tsan` the children are sanitized too: a report on a child's stderr fails
    /// the test that started it, even when the child exits as the test expects.
    @Test func aChildsThreadSanitizerReportFailsTheTest() async throws {
        // The end of a sanitized child's stderr after a race. (Not a "WARNING: …" line: the
        // recorded issue quotes it, and scripts/tsan counts those lines in the log as races.)
        let report = "a log line\nThreadSanitizer: reported 1 warnings\n"
        try await withKnownIssue {
            let result = try await WebImageCommand.run(["-c", "printf 'fetched\\n'; printf '\(report)' >&2"], program: URL(fileURLWithPath: "/bin/sh"))
            #expect(result.status == 0 && result.stdout == "fetched\n")
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("`sh -c") && $0.rawValue.hasSuffix("on its stderr:\nThreadSanitizer: reported 1 warnings\n") }
        }
        // Ordinary output records nothing (`check` says whether it recorded an issue).
        #expect(!ChildSanitizerReports.check("warning: the origin sent no Content-Type\n", of: ["webimage", "fetch"]))
        let clean = try await WebImageCommand.run(["-c", "printf 'a log line\\n' >&2"], program: URL(fileURLWithPath: "/bin/sh"))
        #expect(clean.status == 0 && clean.stderr == "a log line\n")
    }

    /// `scripts/tsan` sends every sanitized process's reports to `log_path`'s files (`PREFIX.PID`),
    /// so a child whose stderr went nowhere is still caught: the harness reads the file of the
    /// pid that ended.
    @Test func aReportFileOfTheChildsPidFailsTheTest() async throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = directory.appendingPathComponent("report").path
        #expect(ChildSanitizerReports.prefix(inOptions: "halt_on_error=0 log_path=\(prefix) second_deadlock_stack=1") == prefix)
        #expect(ChildSanitizerReports.prefix(inOptions: "halt_on_error=0:log_path=stderr") == nil)
        #expect(ChildSanitizerReports.prefix(inOptions: "") == nil)
        // A child that writes what the sanitizer would write for its own pid, and nothing on stderr.
        // (Not a "WARNING: …" line: the recorded issue quotes it, and scripts/tsan counts those.)
        let child = try SpawnedProgram(["/bin/sh", "-c", #"printf 'ThreadSanitizer: reported 1 warnings (pid=%s)\n' $$ > "$0.$$""#, prefix])
        _ = await offPool { child.wait() }
        let found = ChildSanitizerReports.report("", pid: child.pid, prefix: prefix)
        #expect(found?.source == "in \(prefix).\(child.pid)")
        #expect(found?.excerpt == "ThreadSanitizer: reported 1 warnings (pid=\(child.pid))\n")
        // Its stderr is still read when no file names the pid.
        #expect(ChildSanitizerReports.report("x\nThreadSanitizer: reported 2 warnings\n", pid: child.pid &+ 1, prefix: prefix)?.source == "on its stderr")
        // Another pid's file is not this child's.
        #expect(ChildSanitizerReports.report("", pid: child.pid &+ 1, prefix: prefix) == nil)
    }

    /// A command that does not end is killed at its timeout and fails its test: before, a
    /// `serve` that should have refused its options hung the whole suite.
    @Test func aCommandStillRunningAtItsTimeoutIsKilledAndFailsItsTest() async throws {
        let clock = ContinuousClock(), start = clock.now
        var status: Int32?
        await withKnownIssue("the watchdog's issue for the command it killed") {
            status = try await WebImageCommand.run(["600"], program: URL(fileURLWithPath: "/bin/sleep"), timeout: .seconds(1)).status
        }
        #expect(status == SIGKILL)
        // Killed at its timeout, long before `sleep 600` ends (generous: a loaded machine delays the kill's notice).
        #expect(clock.now - start < TestTime.scaled(.seconds(300)), "took \(clock.now - start)")
        // A command that ends in time records nothing.
        #expect(try await WebImageCommand.run(["0"], program: URL(fileURLWithPath: "/bin/sleep"), timeout: .seconds(30)).status == 0)
    }
}
