import Foundation
import Synchronization
import Testing
import WebImage
import WebImageOrigin
import WebImageTerminal

/// `webimage show --protocol auto` where the environment does not tell (an xterm `TERM`, no
/// tmux, no kitty or iTerm variables): it asks the terminal. The terminal is a real
/// pseudo-terminal (`script` runs the command on one); the test answers the query the way kitty,
/// a sixel terminal or a plain VT220 would, and reads which picture format comes out.
@Suite("webimage show: asking the terminal which pictures it shows")
struct ShowAutoDetectionTests {
    /// Runs `show URL` on a pseudo-terminal, answers the graphics query with `reply` as soon as
    /// it arrives, waits until `drawn` is in the output, quits with `q`; returns the output.
    static func show(_ url: URL, reply: String, until drawn: String) async throws -> (output: String, asked: Bool) {
        let command = "stty rows 24 cols 80; exec '\(WebImageCommand.executable.path)' show --cache-dir '\(temporaryDirectory().path)' '\(url.absoluteString)'"
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-q", "-f", "-e", "-c", command, "/dev/null"]
        var environment = ProcessInfo.processInfo.environment
        for name in ["TMUX", "TERM_PROGRAM", "KITTY_WINDOW_ID", "STY"] { environment[name] = nil }
        environment["TERM"] = "xterm-256color"
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // A thread of its own reads the terminal's output and answers at once: the command
        // waits 300 ms for the answer.
        return await offPool {
            var seen = Data(), asked = false, quit = false
            let deadline = Date().addingTimeInterval(60)
            let handle = output.fileHandleForReading
            while Date() < deadline {
                let chunk = handle.availableData
                if chunk.isEmpty { break }  // the command ended
                seen.append(chunk)
                let text = String(decoding: seen, as: UTF8.self)
                if !asked, text.contains("\u{1B}[c") {
                    asked = true
                    input.fileHandleForWriting.write(Data(reply.utf8))
                }
                if asked, !quit, text.contains(drawn) {
                    quit = true
                    input.fileHandleForWriting.write(Data("q".utf8))
                }
            }
            if !quit { process.terminate() }
            process.waitUntilExit()
            return (String(decoding: seen, as: UTF8.self), asked)
        }
    }

    @Test(arguments: [
        // kitty answers the graphics query (and the device attributes after it).
        ("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?62;22c", "\u{1B}_Ga=T,f=32"),
        // A sixel terminal lists 4 in its device attributes.
        ("\u{1B}[?62;4;22c", "\u{1B}P0;1;0q"),
        // A plain VT220: half-blocks.
        ("\u{1B}[?62;1;6c", "▀"),
    ])
    func theTerminalsAnswerPicksTheProtocol(reply: String, drawn: String) async throws {
        try await withOrigin(files: ["red.png": try ShowCommandTests.solidPNG([255, 0, 0])]) { origin in
            let (output, asked) = try await Self.show(origin.imageURL("red.png"), reply: reply, until: drawn)
            #expect(asked, "the command never asked: \(output.debugDescription.prefix(300))")
            #expect(output.contains(drawn), "\(output.debugDescription.prefix(600))")
        }
    }

    @Test func aTerminalThatNeverAnswersGetsHalfBlocksWithoutHanging() async throws {
        try await withOrigin(files: ["red.png": try ShowCommandTests.solidPNG([255, 0, 0])]) { origin in
            let started = ContinuousClock.now
            // An empty answer: nothing is written back; the command gives up after its 300 ms.
            let (output, asked) = try await Self.show(origin.imageURL("red.png"), reply: "", until: "▀")
            #expect(asked)
            #expect(output.contains("▀") && !output.contains("\u{1B}_Ga=T"))
            #expect(ContinuousClock.now - started < .seconds(30))
        }
    }
}
