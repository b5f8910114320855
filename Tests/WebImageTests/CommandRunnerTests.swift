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
}
