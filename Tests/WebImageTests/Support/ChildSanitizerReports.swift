import Foundation
import Testing

/// Thread Sanitizer output a child process wrote, recorded as a test issue.
///
/// `scripts/tsan` builds `webimage` in the same build folder as the tests, so the children the
/// tests start are sanitized too and inherit `TSAN_OPTIONS` (`halt_on_error=0`: they keep
/// running). `scripts/tsan` sets `log_path=DIR/report` there, so every sanitized process — the
/// test runner and each child, whatever a test did with the child's stderr (a pipe, a file,
/// /dev/null, a tmux pane) — writes its reports to `DIR/report.PID`, and the script counts the
/// reports in every file of `DIR` at the end. The harness (`WebImageCommand.run`, the `serve`
/// harness `ServeProcess`, `ChildProcess`, the bomb measurements) also passes each child's pid
/// and stderr here when the child ends, so the test that started a racing child fails itself,
/// quoting the report: from the child's file, or from its stderr when `TSAN_OPTIONS` has no
/// `log_path` (a run by hand). The cost without the sanitizer is one substring search.
enum ChildSanitizerReports {
    /// What starts every line the sanitizer itself writes ("WARNING: ThreadSanitizer: data race",
    /// "FATAL: ThreadSanitizer: …", "ThreadSanitizer: reported 2 warnings").
    static let marker = "ThreadSanitizer"
    /// The most of the child's output an issue quotes (one report with its stacks is 2-4 KB).
    static let excerptLimit = 8_000

    /// `log_path`'s value in `TSAN_OPTIONS` (the sanitizer appends `.PID` to it), if set.
    static let reportPrefix: String? = prefix(inOptions: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] ?? "")

    /// `log_path=…` out of a sanitizer options string (space- or colon-separated `key=value`s);
    /// `nil` when absent or when it names a stream (`stderr`, `stdout`).
    static func prefix(inOptions options: String) -> String? {
        let pairs = options.split(whereSeparator: { $0 == " " || $0 == ":" })
        guard let value = pairs.last(where: { $0.hasPrefix("log_path=") })?.dropFirst("log_path=".count), !value.isEmpty,
              value != "stderr", value != "stdout"
        else { return nil }
        return String(value)
    }

    /// Records an issue when `stderr` of `command` (how the test started the child, for the
    /// message), or the report file the sanitizer wrote for `pid` under `prefix`, holds Thread
    /// Sanitizer output, quoting it from the first report on; whether it did.
    @discardableResult
    static func check(_ stderr: String, pid: pid_t? = nil, prefix: String? = reportPrefix, of command: [String]) -> Bool {
        guard let found = report(stderr, pid: pid, prefix: prefix) else { return false }
        Issue.record("child process `\(command.joined(separator: " "))` wrote Thread Sanitizer output \(found.source):\n\(found.excerpt)")
        return true
    }

    /// The sanitizer output in the report file of `pid` under `prefix`, else in `stderr`, quoted
    /// from its first line on, and where it was ("in PREFIX.PID" or "on its stderr"); `nil` if none.
    static func report(_ stderr: String, pid: pid_t?, prefix: String?) -> (source: String, excerpt: String)? {
        var text = stderr, source = "on its stderr"
        if let pid, let prefix, let file = FileManager.default.contents(atPath: "\(prefix).\(pid)") {
            let written = String(decoding: file, as: UTF8.self)
            if written.contains(marker) { (text, source) = (written, "in \(prefix).\(pid)") }
        }
        guard let first = text.range(of: marker) else { return nil }
        let lineStart = text[..<first.lowerBound].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
        return (source, String(text[lineStart...].prefix(excerptLimit)))
    }
}
