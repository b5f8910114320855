import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `show` plays an animation one frame at a time from its original bytes (issue 25, "Animations
/// stream"): the pipeline decodes the first frame, and the cell composites each later frame when
/// it is due, so the process holds a couple of canvases, not every frame.
@Suite("webimage show: long animations play in a few canvases", .serialized)
struct ShowStreamingTests {
    /// `frames` full frames of `side` × `side`, red and blue in turn, 60 ms each, looping: made
    /// by Pillow, the independent writer (a few KB: solid frames compress to almost nothing).
    static func alternatingGIF(side: Int, frames: Int) async throws -> Data {
        let path = temporaryDirectory().appendingPathExtension("gif").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
            import sys
            from PIL import Image
            side, count = int(sys.argv[2]), int(sys.argv[3])
            frames = [Image.new("RGB", (side, side), (255, 0, 0) if i % 2 == 0 else (0, 0, 255)) for i in range(count)]
            frames[0].save(sys.argv[1], save_all=True, append_images=frames[1:], duration=60, loop=0, optimize=False)
            """
        let result = try await WebImageCommand.run(
            ["python3", "-c", script, path, "\(side)", "\(frames)"], program: URL(fileURLWithPath: "/usr/bin/env"))
        try #require(result.status == 0, "Pillow: \(result.stderr)")
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Runs `show` on `url` in tmux under GNU time until cell 0 has shown every colour of `colours`
    /// (or 60 s, scaled; the grey placeholder is not counted), quits, and returns the colours seen and the process's peak RSS.
    static func show(_ url: URL, colours: Set<[Int]>) async throws -> (seen: Set<[Int]>, peak: Int) {
        let report = temporaryDirectory().appendingPathExtension("time").path
        defer { try? FileManager.default.removeItem(atPath: report) }
        return try await TmuxSession.with { tmux in
            try await tmux.start(
                ["/usr/bin/time", "-f", "maxrss-kb=%M", "-o", report, WebImageCommand.executable.path, "show", "--grid",
                 "--cache-dir", temporaryDirectory().path, "--timeout", "\(15 * TestTime.scale)", url.absoluteString],
                columns: 35, rows: 21)
            var seen = Set<[Int]>()
            let deadline = ContinuousClock.now + TestTime.scaled(.seconds(60))
            while ContinuousClock.now < deadline, !seen.isSuperset(of: colours) {
                let colour = ShowCommandTests.colour(CapturedScreen(try await tmux.capture()), cell: 0)
                if let colour, colour != [64, 64, 64] { seen.insert(colour) }  // not the placeholder
                try await Task.sleep(for: .milliseconds(30))
            }
            try await tmux.send("q")
            let quitBy = ContinuousClock.now + TestTime.scaled(.seconds(20))
            while ContinuousClock.now < quitBy, (try? String(contentsOfFile: report, encoding: .utf8))?.contains("maxrss-kb=") != true {
                try await Task.sleep(for: .milliseconds(50))
            }
            let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
            let kilobytes = text.split(separator: "\n").last { $0.hasPrefix("maxrss-kb=") }.flatMap { Int($0.dropFirst(10)) }
            return (seen, try #require(kilobytes, "GNU time wrote: \(text)") * 1024)
        }
    }

    @Test(.enabled(if: TmuxSession.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/time")))
    func aLongAnimationPlaysFrameByFrameInAFewCanvases() async throws {
        // 45 frames of 1 MP: 180 MB as composited frames all at once (within the 50 MP limit, so
        // the old all-frames decode ran); streamed, one 4 MB canvas and the one before it.
        let long = try await Self.alternatingGIF(side: 1000, frames: 45)
        try await withOrigin(files: ["long.gif": long, "red.png": try ShowCommandTests.solidPNG([255, 0, 0])]) { origin in
            let baseline = try await Self.show(origin.imageURL("red.png"), colours: [[255, 0, 0]])
            #expect(baseline.seen == [[255, 0, 0]])
            let run = try await Self.show(origin.imageURL("long.gif"), colours: [[255, 0, 0], [0, 0, 255]])
            #expect(run.seen == [[255, 0, 0], [0, 0, 255]], "the animation played: \(run.seen)")
            #expect(run.peak < baseline.peak + 48 << 20, "peak \(run.peak >> 20) MB, a still's \(baseline.peak >> 20) MB")
        }
    }
}
