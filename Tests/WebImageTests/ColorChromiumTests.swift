import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Colour as a real client shows it: every colour fixture a browser can open (JPEG, PNG, WebP;
/// 13 ICC profiles, grey ones included), put in one page beside what WebImage made of it, and
/// screenshotted by headless Chromium, which colour-manages to sRGB (`--force-color-profile`).
/// The original and each output must look the same on screen: the converted `fetch` output, the
/// `fetch --color keep` output (pixels untouched, the profile embedded: Chromium must read it),
/// and `serve`'s default output. No reference here is ours: Chromium decodes and converts
/// (skcms) on its own.
extension HeavyTests {
    @Suite("Colour in headless Chromium: the original and WebImage's output look the same")
    struct ColorChromiumTests {
        static let names = ColorManagementTests.cases.map(\.file).filter { !$0.hasSuffix(".tiff") }
        static let side = (width: 64, height: 48)

        @Test func originalsAndOutputsLookTheSameInChromium() async throws {
            let browser = try #require(FetchReportTests.chromium, "Chromium is missing: run ./scripts/setup")
            #expect(Self.names.count >= 30)
            var files: [String: Data] = [:]
            for name in Self.names { files[name] = try ColorManagementTests.load(name) }
            let page = temporaryDirectory("chromium-colour")
            defer { try? FileManager.default.removeItem(at: page) }
            for (name, data) in files {
                try data.write(to: page.appendingPathComponent("original-" + name))
                try ColorManagementTests.load(name + ".pillow.png").write(to: page.appendingPathComponent("pillow-\(name).png"))
            }

            // Row 1 and 2: `fetch --format png`, converted and kept; row 3: `serve`'s PNG.
            try await withImageServer(files: files) { harness in
                for (row, extra) in [(1, [String]()), (2, ["--color", "keep"])] {
                    let out = page.appendingPathComponent("fetch-\(row)"), jsonl = page.appendingPathComponent("fetch-\(row).jsonl")
                    let run = try await WebImageCommand.run(
                        ["fetch"] + Self.names.map { harness.origin.imageURL($0).absoluteString }
                            + ["--output", out.path, "--no-cache", "--format", "png", "--jsonl", jsonl.path] + extra)
                    #expect(run.status == 0, "\(run.stderr)")
                    struct Record: Decodable { var url: String; var file: String? }
                    for line in try String(contentsOf: jsonl, encoding: .utf8).split(separator: "\n") {
                        let record = try JSONDecoder().decode(Record.self, from: Data(line.utf8))
                        let name = String(record.url.split(separator: "/").last ?? "")
                        let file = try #require(record.file, "\(name)")
                        try FileManager.default.moveItem(at: out.appendingPathComponent(file), to: page.appendingPathComponent("row\(row)-\(name).png"))
                    }
                }
                for name in Self.names {
                    let reply = try await harness.image(name, [("format", "png")])
                    #expect(reply.status == 200, "\(name)")
                    try reply.body.write(to: page.appendingPathComponent("row3-\(name).png"))
                }
            }

            // One page: a column per fixture, a row per source, each image at its own pixels.
            var html = "<!doctype html><html><body style=\"margin:0;background:#000\">"
            for (column, name) in Self.names.enumerated() {
                for (row, file) in ["original-\(name)", "row1-\(name).png", "row2-\(name).png", "row3-\(name).png", "pillow-\(name).png"].enumerated() {
                    html += "<img src=\"\(file)\" style=\"position:absolute;left:\(column * Self.side.width)px;top:\(row * Self.side.height)px\">"
                }
            }
            try Data((html + "</body></html>").utf8).write(to: page.appendingPathComponent("page.html"))
            let shot = page.appendingPathComponent("shot.png"), profile = page.appendingPathComponent("profile")
            let child = try ChildProcess([
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--force-color-profile=srgb",
                "--force-device-scale-factor=1", "--hide-scrollbars", "--window-size=\(Self.names.count * Self.side.width),\(5 * Self.side.height)",
                "--screenshot=\(shot.path)", page.appendingPathComponent("page.html").absoluteString,
            ], executable: browser, separateErrors: true)
            let (status, _, log) = await child.exitSeparately()
            #expect(status == 0, "chromium exited \(status): \(log.suffix(2000))")
            let screen = try ImageCoderRegistry.default.decode(try Data(contentsOf: shot))
            #expect(screen.pixelWidth == Self.names.count * Self.side.width && screen.pixelHeight == 5 * Self.side.height)

            /// The largest channel's mean absolute difference between two cells of one column of the
            /// screenshot: `row` and `against` (the original).
            func difference(column: Int, row: Int, against: Int = 0) -> Double {
                var sums = [0, 0, 0]
                for y in 0..<Self.side.height {
                    for x in 0..<Self.side.width {
                        let px = column * Self.side.width + x
                        let p = screen.pixel(x: px, y: against * Self.side.height + y), q = screen.pixel(x: px, y: row * Self.side.height + y)
                        sums[0] += abs(Int(p.r) - Int(q.r)); sums[1] += abs(Int(p.g) - Int(q.g)); sums[2] += abs(Int(p.b) - Int(q.b))
                    }
                }
                return Double(sums.max()!) / Double(Self.side.width * Self.side.height)
            }
            var worst = 0.0
            for (column, name) in Self.names.enumerated() {
                let pillow = difference(column: column, row: 4)
                for (row, what) in [(1, "fetch"), (2, "fetch --color keep"), (3, "serve")] {
                    let error = difference(column: column, row: row)
                    worst = max(worst, error)
                    if pillow <= 2 {
                        #expect(error <= 2, "\(name), \(what): mean difference \(error) levels on screen")
                    } else {
                        // Chromium disagrees with LittleCMS itself here (Pillow's conversion is as far
                        // off): then WebImage must look like Pillow's conversion, or like the original.
                        #expect(difference(column: column, row: row, against: 4) <= 2 || error <= 2, "\(name), \(what): \(error) on screen, Pillow \(pillow)")
                    }
                }
            }
            // Chromium agrees with LittleCMS (Pillow) on all but the grey L* profile, whose curve it
            // does not apply (it shows those files' samples as they are: 5.3 levels from LittleCMS).
            let disagreements = Self.names.enumerated().filter { difference(column: $0.offset, row: 4) > 2 }.map(\.element)
            #expect(disagreements == ["gray-cie-l.jpg", "gray-cie-l.png"], "\(disagreements)")
            #expect(worst < 6)
        }
    }
}
