import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("webimage show: in tmux and in pipes", .serialized)
struct ShowCommandTests {
    static func solidPNG(_ rgb: [UInt8], side: Int = 32) throws -> Data {
        var pixels: [UInt8] = []
        for _ in 0..<(side * side) { pixels += rgb + [255] }
        return try PNGCoder().encode(
            Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: pixels, isOpaque: true), as: .png, quality: 1)
    }

    static func files() throws -> [String: Data] {
        [
            "red.png": try solidPNG([255, 0, 0]), "green.png": try solidPNG([0, 255, 0]),
            "blue.png": try solidPNG([0, 0, 255]), "yellow.png": try solidPNG([255, 255, 0]),
            // Noise compresses badly: tens of kilobytes, streamed 256 bytes every 300 ms.
            "slowA.png": try SampleImages.png(width: 96, height: 96, seed: 1),
            "slowB.png": try SampleImages.png(width: 96, height: 96, seed: 2),
        ]
    }

    /// The one colour cell `cell` shows near its top left (an upper half-block with the same
    /// colour in both halves), or nil. Cells are 17 columns and 10 rows apart (16 × 8 pictures),
    /// `columns` to a row: 2 in a 35-column pane, whose status line is row 20.
    static func colour(_ screen: CapturedScreen, cell: Int, columns: Int = 2) -> [Int]? {
        let row = cell / columns * 10 + 3, column = cell % columns * 17 + 4
        guard let top = screen[row, column], top.character == "▀" else { return nil }
        return top.foreground == top.background ? top.foreground : nil
    }

    /// The first screen within 60 s that satisfies `condition`.
    static func screen(_ tmux: TmuxSession, until condition: (CapturedScreen) -> Bool) async throws -> CapturedScreen? {
        let deadline = ContinuousClock.now + TestTime.scaled(.seconds(60))
        while ContinuousClock.now < deadline {
            let screen = CapturedScreen(try await tmux.capture())
            if condition(screen) { return screen }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test(.enabled(if: TmuxSession.isAvailable))
    func gridPagesRebindCellsAndCancelTheLoadsThatLeftTheScreen() async throws {
        try await withOrigin(files: try Self.files()) { origin in
            let slow = "chunk=256&stall=300"
            let urls = [
                origin.imageURL("red.png"), origin.imageURL("green.png"),
                origin.imageURL("slowA.png", query: slow), origin.imageURL("slowB.png", query: slow),
                origin.imageURL("blue.png"), origin.imageURL("yellow.png"),
            ].map(\.absoluteString)
            try await TmuxSession.with { tmux in
                try await tmux.start(
                    [WebImageCommand.executable.path, "show", "--grid", "--cache-dir", temporaryDirectory().path, "--timeout", "\(15 * TestTime.scale)"] + urls,
                    columns: 35, rows: 21)

                func colour(_ screen: CapturedScreen, cell: Int) -> [Int]? { Self.colour(screen, cell: cell) }
                func screen(until condition: (CapturedScreen) -> Bool) async throws -> CapturedScreen? {
                    try await Self.screen(tmux, until: condition)
                }

                // Page 1: two colours drawn, two slow loads under way with their progress captions.
                let first = try await screen { s in
                    colour(s, cell: 0) == [255, 0, 0] && colour(s, cell: 1) == [0, 255, 0] && s.text(18).contains("slowB.png")
                }
                let lastScreen = CapturedScreen(try await tmux.capture()).allText
                let page1 = try #require(first, "page 1 never showed; last screen:\n\(lastScreen)")
                #expect(page1.text(20).hasPrefix("page 1/2"), "status: \(page1.text(20))")
                #expect(page1.text(8).hasPrefix("red.png 32×32"), "caption: \(page1.text(8))")
                #expect(page1.text(18).contains("%") || page1.text(18).contains("…"), "a loading caption: \(page1.text(18))")
                // The loading cell shows the placeholder or a preview: its box is drawn.
                #expect(page1[13, 4]?.character == "▀" && page1[13, 4]?.foreground != nil, "row: \(page1.raw(13).debugDescription)")
                #expect(origin.requestCount(path: "/images/slowA.png") == 1 && origin.abortedBodies(path: "/images/slowA.png") == 0)

                // Both slow bodies have begun, so paging away has two to abort.
                let begun = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < begun,
                      origin.bytesSent(path: "/images/slowA.png") == 0 || origin.bytesSent(path: "/images/slowB.png") == 0 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                // Page 2 (n): the cells are rebound; the slow loads of page 1 are cancelled.
                try await tmux.send("n")
                let second = try await screen { s in colour(s, cell: 0) == [0, 0, 255] && colour(s, cell: 1) == [255, 255, 0] }
                let secondScreen = CapturedScreen(try await tmux.capture()).allText
                let page2 = try #require(second, "page 2 never showed:\n\(secondScreen)")
                #expect(page2.text(20).hasPrefix("page 2/2"))
                #expect(page2.text(18).trimmingCharacters(in: .whitespaces).isEmpty, "cells without an image are empty")
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline,
                      origin.abortedBodies(path: "/images/slowA.png") < 1 || origin.abortedBodies(path: "/images/slowB.png") < 1 {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(origin.abortedBodies(path: "/images/slowA.png") == 1, "paging cancelled slowA's download")
                #expect(origin.abortedBodies(path: "/images/slowB.png") == 1, "paging cancelled slowB's download")

                // Back (left arrow): red and green come from memory at once; the slow ones start again.
                try await tmux.send("Left")
                let back = try await screen { s in colour(s, cell: 0) == [255, 0, 0] && s.text(20).hasPrefix("page 1/2") }
                #expect(back != nil)
                let again = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < again, origin.requestCount(path: "/images/slowA.png") < 2 {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(origin.requestCount(path: "/images/red.png") == 1, "red came from the memory cache")
                #expect(origin.requestCount(path: "/images/slowA.png") == 2)

                try await tmux.send("q")
                let quitBy = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < quitBy, try await !tmux.paneIsDead() { try await Task.sleep(for: .milliseconds(50)) }
                #expect(try await tmux.paneIsDead(), "q quits")
            }
        }
    }

    /// Solid frames, `delay` each; `loopCount` plays (0: forever).
    static func animatedGIF(_ colours: [[UInt8]], delay: Duration, loopCount: Int) throws -> Data {
        let frames = colours.map { rgb -> ImageFrame in
            var pixels: [UInt8] = []
            for _ in 0..<(32 * 32) { pixels += rgb + [255] }
            return ImageFrame(pixels: pixels, duration: delay)
        }
        let image = Image(format: .gif, pixelWidth: 32, pixelHeight: 32, frames: frames, loopCount: loopCount)
        return try GIFCoder().encode(image, as: .gif, quality: 1)
    }

    @Test(.enabled(if: TmuxSession.isAvailable))
    func animationsPlayPauseStopAfterTheirLoopsAndResizingLaysOutAgain() async throws {
        var files = try Self.files()
        files["blink.gif"] = try Self.animatedGIF([[255, 0, 0], [0, 0, 255]], delay: .milliseconds(300), loopCount: 0)
        files["once.gif"] = try Self.animatedGIF([[0, 255, 0], [255, 255, 0]], delay: .milliseconds(200), loopCount: 1)
        try await withOrigin(files: files) { origin in
            let urls = ["blink.gif", "once.gif", "red.png", "green.png", "blue.png", "yellow.png"].map { origin.imageURL($0).absoluteString }
            try await TmuxSession.with { tmux in
                try await tmux.start(
                    [WebImageCommand.executable.path, "show", "--grid", "--cache-dir", temporaryDirectory().path, "--timeout", "\(15 * TestTime.scale)"] + urls,
                    columns: 35, rows: 21)
                func colour(_ screen: CapturedScreen, cell: Int, columns: Int = 2) -> [Int]? {
                    Self.colour(screen, cell: cell, columns: columns)
                }
                /// The colours cell `cell` showed over `duration`, sampled every 50 ms (or until it
                /// showed every colour of `enough`: a loaded machine can slow the playback down).
                func seen(cell: Int, for duration: Duration, enough: Set<[Int]>? = nil) async throws -> Set<[Int]> {
                    var colours = Set<[Int]>()
                    let end = ContinuousClock.now + duration
                    while ContinuousClock.now < end, enough.map({ !colours.isSuperset(of: $0) }) ?? true {
                        if let seen = colour(CapturedScreen(try await tmux.capture()), cell: cell) { colours.insert(seen) }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    return colours
                }

                // Forever: both frames show, again and again. Played once: ends on the last frame.
                let loadedBy = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < loadedBy, colour(CapturedScreen(try await tmux.capture()), cell: 1) != [255, 255, 0] {
                    try await Task.sleep(for: .milliseconds(50))
                }
                let blinking = try await seen(cell: 0, for: TestTime.scaled(.seconds(10)), enough: [[255, 0, 0], [0, 0, 255]])
                #expect(blinking == [[255, 0, 0], [0, 0, 255]], "blink.gif showed \(blinking)")
                let once = try await seen(cell: 1, for: .seconds(1))
                #expect(once == [[255, 255, 0]], "once.gif stays on its last frame; showed \(once)")

                // Space pauses: one colour only, and the status line says so.
                try await tmux.send("Space")
                let pauseBy = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < pauseBy, !CapturedScreen(try await tmux.capture()).text(20).contains("paused") {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(CapturedScreen(try await tmux.capture()).text(20).contains("paused"))
                try await Task.sleep(for: .milliseconds(100))  // a frame drawn as the key arrived
                let paused = try await seen(cell: 0, for: .seconds(1.5))
                #expect(paused.count == 1, "paused animation showed \(paused)")
                try await tmux.send("Space")
                let resumed = try await seen(cell: 0, for: .seconds(2))
                #expect(resumed.count == 2, "resumed animation showed \(resumed)")

                // A wider window (SIGWINCH): three cells a row, all six images on one page.
                try await tmux.tmux(["resize-window", "-t", tmux.name, "-x", "53", "-y", "21"])
                let deadline = ContinuousClock.now + .seconds(30)
                var wide = CapturedScreen(try await tmux.capture())
                while ContinuousClock.now < deadline, !(wide.text(20).hasPrefix("page 1/1") && colour(wide, cell: 5, columns: 3) == [255, 255, 0]) {
                    try await Task.sleep(for: .milliseconds(100))
                    wide = CapturedScreen(try await tmux.capture())
                }
                #expect(wide.text(20).hasPrefix("page 1/1"), "status: \(wide.text(20))")
                #expect(colour(wide, cell: 2, columns: 3) == [255, 0, 0] && colour(wide, cell: 5, columns: 3) == [255, 255, 0])
                try await tmux.send("q")
            }
        }
    }

    /// A load whose answer has not begun shows the placeholder: the grey (64, 64, 64) box, then
    /// the image once it arrives.
    @Test(.enabled(if: TmuxSession.isAvailable))
    func aLoadThatHasNotAnsweredShowsTheGreyPlaceholderThenTheImage() async throws {
        try await withOrigin(files: try Self.files()) { origin in
            let urls = [origin.imageURL("red.png", query: "delay=12000"), origin.imageURL("green.png")].map(\.absoluteString)
            try await TmuxSession.with { tmux in
                try await tmux.start(
                    [WebImageCommand.executable.path, "show", "--grid", "--cache-dir", temporaryDirectory().path, "--timeout", "\(15 * TestTime.scale)"] + urls,
                    columns: 35, rows: 21)
                // The second cell's image is drawn while the first still waits for its answer.
                let waiting = try await Self.screen(tmux) { Self.colour($0, cell: 1) == [0, 255, 0] }
                let waitingColour = waiting.flatMap { Self.colour($0, cell: 0) }
                #expect(waitingColour == [64, 64, 64], "cell 0 while waiting: \(String(describing: waitingColour))")
                #expect(origin.requestCount(path: "/images/red.png") == 1)
                let arrived = try await Self.screen(tmux) { Self.colour($0, cell: 0) == [255, 0, 0] }
                #expect(arrived != nil, "the image never replaced the placeholder")
                try await tmux.send("q")
            }
        }
    }

    @Test func withoutATerminalItExits64UnlessToldToWriteBlocks() async throws {
        try await withOrigin(files: try Self.files()) { origin in
            let cache = temporaryDirectory().path
            let refused = try await WebImageCommand.run(["show", origin.imageURL("red.png").absoluteString, "--cache-dir", cache])
            #expect(refused.status == 64)
            #expect(refused.stderr.contains("not a terminal"), "stderr: \(refused.stderr)")

            let written = try await WebImageCommand.run([
                "show", "--grid", "--protocol", "blocks", "--width", "35", "--cell-width", "12", "--cache-dir", cache,
                origin.imageURL("red.png").absoluteString, origin.imageURL("missing.png").absoluteString,
            ])
            #expect(written.status == 0, "stderr: \(written.stderr)")
            let screen = CapturedScreen(written.stdout)
            // Two 12-column cells of 6 image rows: red at the left, the failure mark at the right.
            for row in 0..<6 {
                for column in 0..<12 {
                    #expect(screen[row, column]?.foreground == [255, 0, 0] && screen[row, column]?.background == [255, 0, 0])
                    #expect(screen[row, column + 13]?.foreground == [0x80, 0, 0], "the failure image")
                }
            }
            #expect(screen.text(6).hasPrefix("red.p… 32×32"), "caption row: \(screen.text(6))")
            #expect(screen.text(6).contains("✗ HTTP 404"), "caption row: \(screen.text(6))")
        }
    }
}
