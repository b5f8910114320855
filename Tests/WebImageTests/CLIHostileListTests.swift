import Foundation
import Testing

/// Lists and names a stranger wrote, through the real binary (red team, stop 49): escape
/// sequences in a list line reached the terminal raw (they could retitle the window or clear the
/// screen), and `prefetch` read its whole `--input` first (an 800 MB line took 1.6 GB).
@Suite("webimage prefetch and fetch: hostile list lines")
struct CLIHostileListTests {
    static let hostile = "http://127.0.0.1:1/ok.png\n\u{1B}]0;PWNED\u{07}not a url\u{1B}[2J\n"

    static func expectNoRawControls(_ result: CommandResult, _ label: String) {
        let output = result.stdout + result.stderr
        #expect(!output.contains("\u{1B}") && !output.contains("\u{07}"), "\(label): \(output.debugDescription)")
        #expect(output.contains("\\u{1B}]0;PWNED\\u{7}"), "\(label) shows the line, escaped: \(output.debugDescription)")
    }

    @Test func escapeSequencesInListLinesAreShownNotSent() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("list.txt")
        try Data(Self.hostile.utf8).write(to: list)
        let prefetch = try await WebImageCommand.run(["prefetch", "--cache-dir", directory.appendingPathComponent("cache").path, "--input", list.path])
        Self.expectNoRawControls(prefetch, "prefetch")
        let fetch = try await WebImageCommand.run([
            "fetch", "--no-cache", "--retries", "0", "--output", directory.appendingPathComponent("out").path, "--input", list.path,
        ])
        Self.expectNoRawControls(fetch, "fetch")
    }

    @Test func aHugeLineIsRefusedWithoutBeingHeld() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("list.txt")
        try Data(("http://127.0.0.1:1/" + String(repeating: "a", count: 200_000) + "\n").utf8).write(to: list)
        let result = try await WebImageCommand.run(["prefetch", "--cache-dir", directory.appendingPathComponent("cache").path, "--input", list.path])
        #expect(result.status != 0 && result.stderr.contains("line 1 is longer than 64 KB"), "\(result.stderr)")
    }
}
