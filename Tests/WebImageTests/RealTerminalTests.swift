import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `webimage show` in real terminal emulators that draw pictures — xterm (sixel), kitty (kitty
/// graphics) and mlterm (iTerm2 inline images) — on a virtual X display, read back as pixels.
///
/// The other `show` tests decode the bytes the command writes; these check what a person would
/// see: the terminal accepted the sequence, placed the picture in the cells `show` laid out,
/// kept its aspect ratio in real pixels (which depends on the cell size the terminal reports) and
/// drew its colours.
@Suite("webimage show: pictures in real terminals", .serialized)
struct RealTerminalTests {
    /// A 64 × 64 PNG in four quadrants: red, green / blue, yellow.
    static func quadrants() throws -> Data {
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]]
        var pixels: [UInt8] = []
        for y in 0..<64 {
            for x in 0..<64 { pixels += colours[(y / 32) * 2 + x / 32] + [255] }
        }
        return try PNGCoder().encode(
            Image(format: .png, pixelWidth: 64, pixelHeight: 64, pixels: pixels, isOpaque: true), as: .png, quality: 1)
    }

    enum Terminal: String, CaseIterable, CustomTestStringConvertible {
        case xterm, kitty, mlterm
        var testDescription: String {
            switch self {
            case .xterm: "xterm as a VT340 (sixel, found by asking the terminal)"
            case .kitty: "kitty (kitty graphics, found from its environment)"
            case .mlterm: "mlterm (iTerm2 inline images, named with --protocol)"
            }
        }

        /// The emulator's command line running `show`.
        func command(_ show: [String]) -> [String] {
            switch self {
            case .xterm:
                ["/usr/bin/xterm", "-ti", "vt340", "-xrm", "XTerm*numColorRegisters: 256", "-geometry", "80x24+0+0",
                 "-bw", "0", "-b", "0", "+sb", "-fn", "fixed", "-bg", "black", "-fg", "white", "-e"] + show
            case .kitty:
                ["/usr/bin/kitty", "--config", "NONE", "-o", "background=#000000", "-o", "foreground=#ffffff",
                 "-o", "window_padding_width=0", "-o", "remember_window_size=no", "-o", "initial_window_width=80c",
                 "-o", "initial_window_height=24c", "-o", "font_size=10"] + show
            case .mlterm:
                ["/usr/bin/mlterm", "--geometry", "80x24+0+0", "--bg", "black", "--fg", "white", "--sb", "false",
                 "-e"] + show + ["--protocol", "iterm"]
            }
        }
    }

    @Test(arguments: Terminal.allCases)
    func thePictureAppearsInItsColoursAndProportions(terminal: Terminal) async throws {
        let path = "/usr/bin/\(terminal.rawValue)"
        try #require(XDisplay.isAvailable && FileManager.default.isExecutableFile(atPath: path),
                     "Xvfb, xwd, xwininfo and \(path) are needed: scripts/setup installs them")
        try await withOrigin(files: ["quadrants.png": try Self.quadrants()]) { origin in
            try await XDisplay.with(width: 800, height: 480) { display in
                let log = temporaryDirectory().appendingPathComponent("terminal.log")
                let show = [WebImageCommand.executable.path, "show", "--cache-dir", temporaryDirectory().path,
                            origin.imageURL("quadrants.png").absoluteString]
                let process = try display.launch(terminal.command(show), log: log)
                defer { process.kill() }
                let red = [255, 0, 0], green = [0, 255, 0], blue = [0, 0, 255], yellow = [255, 255, 0]
                var found: [(x: Range<Int>, y: Range<Int>)] = []
                var shot: Screenshot?
                let deadline = ContinuousClock.now + TestTime.scaled(.seconds(60))
                while ContinuousClock.now < deadline, process.isRunning {
                    if let screen = try await display.screenshot() {
                        shot = screen
                        found = [red, green, blue, yellow].compactMap { screen.bounds(of: $0) }
                    }
                    if found.count == 4 { break }
                    try await Task.sleep(for: .milliseconds(250))
                }
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                try #require(found.count == 4, "the picture never appeared; terminal output: \(output.prefix(500))")
                let (r, g, b, y) = (found[0], found[1], found[2], found[3])
                // The quadrants sit where they belong: green right of red, blue below red, yellow below green.
                #expect(abs(g.x.lowerBound - r.x.upperBound) <= 3 && abs(g.y.lowerBound - r.y.lowerBound) <= 3)
                #expect(abs(b.y.lowerBound - r.y.upperBound) <= 3 && abs(b.x.lowerBound - r.x.lowerBound) <= 3)
                #expect(abs(y.x.lowerBound - b.x.upperBound) <= 3 && abs(y.y.lowerBound - g.y.upperBound) <= 3)
                // Square in real pixels, and drawn larger than a few cells.
                let width = y.x.upperBound - r.x.lowerBound, height = y.y.upperBound - r.y.lowerBound
                #expect(width >= 64 && height >= 64, "\(width) × \(height)")
                #expect(abs(width - height) * 10 <= max(width, height), "not square: \(width) × \(height)")
                // Each quadrant's middle is its colour (sixel's palette may move a channel a little).
                if let shot {
                    for (box, colour) in zip(found, [red, green, blue, yellow]) {
                        let middle = shot[x: (box.x.lowerBound + box.x.upperBound) / 2, y: (box.y.lowerBound + box.y.upperBound) / 2]
                        #expect(zip(middle, colour).allSatisfy { abs($0 - $1) <= 24 }, "\(middle) for \(colour)")
                    }
                }
            }
        }
    }
}
