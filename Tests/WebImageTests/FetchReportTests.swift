import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `fetch --report`: the HTML contact sheet, opened in headless Chromium (Debian's `chromium`,
/// installed by scripts/setup): it renders without console errors and shows the right counts.
@Suite("webimage fetch --report in headless Chromium")
struct FetchReportTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs headless Chromium on `file` and returns the rendered DOM and Chromium's log.
    static func render(_ file: URL) async throws -> (dom: String, log: String) {
        let browser = try #require(chromium, "Chromium is missing: run ./scripts/setup (it installs Debian's chromium for this test)")
        let profile = temporaryDirectory("chromium-profile")
        defer { try? FileManager.default.removeItem(at: profile) }
        let child = try ChildProcess([
            "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--enable-logging=stderr",
            "--v=0", "--virtual-time-budget=3000", "--dump-dom", file.absoluteString,
        ], executable: browser, separateErrors: true)
        let (status, dom, log) = await child.exitSeparately()
        #expect(status == 0, "chromium exited \(status): \(log.suffix(2000))")
        return (dom, log)
    }

    /// The text of the element with `id`, as rendered.
    static func text(ofID id: String, in dom: String) -> String? {
        guard let start = dom.range(of: "id=\"\(id)\">") else { return nil }
        return String(dom[start.upperBound...].prefix { $0 != "<" })
    }

    @Test func theReportRendersWithItsCountsThumbnailsAndFailures() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let names = ["small.jpg", "logo.png", "photo.webp", "spinner.gif", "photo.heic", "photo.avif"]
            let urls = names.map { origin.imageURL($0).absoluteString } + [origin.imageURL("missing.jpg").absoluteString, "not a url"]
            let report = dir.appendingPathComponent("report.html")
            let result = try await WebImageCommand.run(["fetch"] + urls + ["--output", dir.appendingPathComponent("out").path, "--no-cache", "--report", report.path])
            #expect(result.status == 3)
            let html = try String(contentsOf: report, encoding: .utf8)
            // Self-contained: no external resource of any kind.
            #expect(!html.contains("http-equiv") && !html.contains("<script") && !html.contains("<link"))
            #expect(!html.contains("src=\"http") && !html.contains("url(http"))
            let (dom, log) = try await Self.render(report)
            #expect(Self.text(ofID: "count-requested", in: dom) == "8")
            #expect(Self.text(ofID: "count-succeeded", in: dom) == "6")
            #expect(Self.text(ofID: "count-failed", in: dom) == "2")
            #expect(Self.text(ofID: "count-network", in: dom) == "6")
            #expect(dom.components(separatedBy: "<figure class=\"image\">").count - 1 == 6)
            #expect(dom.components(separatedBy: "src=\"data:image/webp;base64,").count - 1 == 6)
            #expect(dom.components(separatedBy: "<tr class=\"failure\">").count - 1 == 2)
            #expect(dom.contains("bad HTTP status 404") && dom.contains("not an http(s) URL"))
            #expect(dom.contains("<polyline") && dom.contains("id=\"distribution\""))
            for name in names { #expect(dom.contains("<b>\(name)</b>"), "\(name) is not on the sheet") }
            // No console messages: the page has no script, and every image decodes.
            let console = log.split(separator: "\n").filter { $0.contains("CONSOLE") || $0.contains("Uncaught") || $0.contains("Not allowed to load") }
            #expect(console.isEmpty, "\(console)")
        }
    }

    /// A picture whose thumbnail would decode it whole (a PNG over 16 MP) gets a cell without a
    /// thumbnail (red team, stop 53: a 160 KB PNG of 49 MP took 9 s of CPU for its cell); a
    /// JPEG, decoded at an eighth, keeps one at any size.
    @Test func aHugePNGGetsItsCellWithoutAThumbnail() async throws {
        let huge = try await HostileImages.strip(width: 5_000, height: 4_000)
        let header = try ImageCoderRegistry.default.readHeader(huge)
        #expect(header.pixelWidth * header.pixelHeight > 16 << 20)
        try await withOrigin(files: SampleFiles.standard.merging(["huge.png": huge]) { $1 }) { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let report = dir.appendingPathComponent("report.html")
            let urls = [origin.imageURL("huge.png").absoluteString, origin.imageURL("small.jpg").absoluteString]
            let result = try await WebImageCommand.run(["fetch"] + urls + ["--output", dir.appendingPathComponent("out").path, "--no-cache", "--report", report.path])
            #expect(result.status == 0, "\(result.stderr)")
            let html = try String(contentsOf: report, encoding: .utf8)
            #expect(html.components(separatedBy: "<figure class=\"image\">").count - 1 == 2)
            #expect(html.components(separatedBy: "src=\"data:image/webp;base64,").count - 1 == 1, "only the JPEG has a thumbnail")
        }
    }

    @Test func aLargeRunStaysSmallEnoughForTenThousandImages() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let count = 2100
            let list = dir.appendingPathComponent("urls.txt")
            try (0..<count).map { origin.imageURL("thumb-\($0 % 12 + 1).jpg", query: "n=\($0)").absoluteString }.joined(separator: "\n")
                .write(to: list, atomically: true, encoding: .utf8)
            let report = dir.appendingPathComponent("report.html")
            let result = try await WebImageCommand.run([
                "fetch", "--input", list.path, "--output", dir.appendingPathComponent("out").path, "--no-cache", "--concurrency", "16",
                "--name", "{index}.{ext}", "--report", report.path,
            ])
            #expect(result.status == 0, "\(result.stdout.suffix(500))")
            let bytes = try #require(try FileManager.default.attributesOfItem(atPath: report.path)[.size] as? Int)
            // Per image (64-pixel WebP thumbnails past 2,000 images): 10,000 of them stay under 20 MB.
            #expect(bytes / count * 10_000 < 20 << 20, "\(bytes) bytes for \(count) images")
            let (dom, _) = try await Self.render(report)
            #expect(Self.text(ofID: "count-succeeded", in: dom) == "\(count)")
            #expect(dom.components(separatedBy: "<section class=\"sheet\">").count - 1 == 5)
        }
    }
}

extension FetchReportTests {
    /// `fetch --report` keeps at most `--report-images` images on its sheet (10,000 by default,
    /// as many as `webimage report` merges) and says how many more there were: a run of millions
    /// kept every thumbnail in memory until it ended (#30). The totals still count every image.
    @Test func theSheetStopsAtItsImageLimit() async throws {
        try await withOrigin { origin in
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let list = dir.appendingPathComponent("list.txt")
            try (1...130).map { origin.imageURL("small.jpg", query: "n=\($0)").absoluteString }.joined(separator: "\n")
                .write(to: list, atomically: true, encoding: .utf8)
            let report = dir.appendingPathComponent("report.html")
            let result = try await WebImageCommand.run([
                "fetch", "--input", list.path, "--output", dir.appendingPathComponent("out").path, "--no-cache",
                "--report", report.path, "--report-images", "100",
            ])
            #expect(result.status == 0, "\(result.stderr.suffix(500))")
            let html = try String(contentsOf: report, encoding: .utf8)
            #expect(html.components(separatedBy: "<figure class=\"image\">").count - 1 == 100)
            #expect(html.components(separatedBy: "src=\"data:image/webp;base64,").count - 1 == 100)
            #expect(html.contains("30 more images were written; the sheet shows the first 100"))
            #expect(html.contains("id=\"count-succeeded\">130<"))
            let refused = try await WebImageCommand.run(["fetch", "x", "--output", dir.path, "--report", report.path, "--report-images", "0"])
            #expect(refused.status != 0 && refused.stderr.contains("--report-images must be 1…100000"))
        }
    }
}
