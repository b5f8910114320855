import Testing

/// Thread Sanitizer output a child process printed on its standard error, recorded as a test issue.
///
/// `scripts/tsan` builds `webimage` in the same build folder as the tests, so the child the tests
/// start is sanitized too and inherits `TSAN_OPTIONS` (`halt_on_error=0`: it keeps running). Its
/// reports go to its own stderr, which the tests read into a string: without this check a race in
/// a `fetch`, `info` or `serve` child passed unseen unless the test happened to print that string.
/// The harness (`WebImageCommand.run`, the `serve` harness `ServeProcess`, `ChildProcess`, the
/// bomb measurements) passes every child's stderr here. The cost is one substring search;
/// nothing else happens unless the sanitizer wrote something. (Children whose stderr a test sends
/// to /dev/null are not checked; a sanitized child that reported still exits with status 66.)
enum ChildSanitizerReports {
    /// What starts every line the sanitizer itself writes ("WARNING: ThreadSanitizer: data race",
    /// "FATAL: ThreadSanitizer: …", "ThreadSanitizer: reported 2 warnings").
    static let marker = "ThreadSanitizer"
    /// The most of the child's output an issue quotes (one report with its stacks is 2-4 KB).
    static let excerptLimit = 8_000

    /// Records an issue when `stderr` of `command` (how the test started the child, for the
    /// message) holds Thread Sanitizer output, quoting it from the first report on; whether it did.
    @discardableResult
    static func check(_ stderr: String, of command: [String]) -> Bool {
        guard let first = stderr.range(of: marker) else { return false }
        let lineStart = stderr[..<first.lowerBound].lastIndex(of: "\n").map { stderr.index(after: $0) } ?? stderr.startIndex
        let excerpt = String(stderr[lineStart...].prefix(excerptLimit))
        Issue.record("child process `\(command.joined(separator: " "))` wrote Thread Sanitizer output on its stderr:\n\(excerpt)")
        return true
    }
}
