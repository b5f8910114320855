import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `fetch --format`/`--resize` re-encodes, and `--report` decodes each image for its thumbnail:
/// both once ran outside `--memory-budget-mb` (six 143 KB PNGs of 7000 × 7000 written as WebP
/// peaked at 1.16 GB with a 300 MB budget; their report thumbnails at 428 MB with 100 MB). Each
/// now reserves its price first: an export or a thumbnail that cannot fit is refused, the
/// process stays near its budget.
extension HeavyTests {
@Suite("webimage fetch: exports and thumbnails inside the memory budget")
struct FetchExportBudgetTests {
    @Test func exportsAndThumbnailsReserveTheirMemory() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("big.png")
        let made = try await WebImageCommand.run(
            ["python3", "-c", "import sys; from PIL import Image; Image.new('RGB', (7000, 7000)).save(sys.argv[1])", png.path],
            program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(made.status == 0, "\(made.stderr)")
        let data = try Data(contentsOf: png)
        let files = Dictionary(uniqueKeysWithValues: (0..<3).map { ("big-\($0).png", data) })
        try await withOrigin(files: files) { origin in
            let urls = (0..<3).map { origin.imageURL("big-\($0).png").absoluteString }
            let list = try FetchListTests.write(urls, in: dir)
            let exported = try await BombMemoryTests.peakMemory([
                "fetch", "--input", list.path, "--output", dir.appendingPathComponent("webp").path, "--no-cache",
                "--format", "webp", "--memory-budget-mb", "300", "--concurrency", "3",
            ])
            #expect(exported.status == 3, "\(exported.output)")
            #expect(exported.output.contains("memory"), "\(exported.output)")
            #expect(exported.bytes < 450 << 20, "peak \(exported.bytes >> 20) MB with a 300 MB budget")
            let report = dir.appendingPathComponent("report.html")
            let reported = try await BombMemoryTests.peakMemory([
                "fetch", "--input", list.path, "--output", dir.appendingPathComponent("originals").path, "--no-cache",
                "--report", report.path, "--memory-budget-mb", "100", "--concurrency", "3",
            ])
            #expect(reported.status == 0, "\(reported.output)")
            #expect(reported.bytes < 250 << 20, "peak \(reported.bytes >> 20) MB with a 100 MB budget")
            #expect(FileManager.default.fileExists(atPath: report.path))
        }
    }
}
}
