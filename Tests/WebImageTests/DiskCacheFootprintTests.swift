import Foundation
import Testing
@testable import WebImage
import WebImageOrigin

/// The disk cache's folder stays within its limit plus max(1 MiB, 2 %) at every moment, index,
/// WAL, `-shm` and temporary files included (issue 27, "Cache costs"), through a real
/// `webimage fetch` against a real origin.
@Suite("Disk cache footprint")
struct DiskCacheFootprintTests {
    @Test func slackAndWALBudgetFollowTheLimit() {
        let small = DiskFootprint(sizeLimit: 2 << 20)
        #expect(small.slack == 1 << 20)
        #expect(small.walBudget == 256 << 10 && small.walPages == 64)
        let large = DiskFootprint(sizeLimit: 500 << 20)
        #expect(large.slack == (500 << 20) / 50)
        #expect(large.walBudget == large.slack / 4 / 4096 * 4096)
        #expect(DiskFootprint(sizeLimit: 100 << 30).walBudget == 4 << 20)  // SQLite's default at most
        #expect(DiskFootprint(sizeLimit: 0).walBudget == 256 << 10)
    }

    @Test func fetchWithATwoMegabyteCacheNeverTakesTheFolderPastItsBound() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            let limit = 2 << 20, bound = limit + max(1 << 20, limit / 50)
            // Many small entries (the index and its WAL grow with the count) and some large ones.
            let list = (0..<900).map { n in
                n % 15 == 0 ? origin.imageURL("landscape.jpg", query: "copy=\(n)") : origin.imageURL("thumb-\(n % 12 + 1).jpg", query: "copy=\(n)")
            }
            let fetched = list.enumerated().reduce(0) { sum, item in
                sum + SampleFiles.standard[item.offset % 15 == 0 ? "landscape.jpg" : "thumb-\(item.offset % 12 + 1).jpg"]!.count
            }
            #expect(fetched > 3 * limit)  // the run has to evict, several times over
            let finished = Recorder<CommandResult>()
            let run = Task {
                finished.append(try await WebImageCommand.run(
                    ["fetch", "--input", "-", "--output", temporaryDirectory().path, "--cache-dir", cache.path, "--cache-size-mb", "2",
                     "--concurrency", "16"],
                    stdin: list.map(\.absoluteString).joined(separator: "\n")))
            }
            var peak = 0, peakWAL = 0, samples = 0
            while finished.all.isEmpty {
                peak = max(peak, Self.bytes(in: cache))
                peakWAL = max(peakWAL, DiskFootprint.fileSize(cache.appendingPathComponent("index.sqlite-wal").path))
                samples += 1
                try await Task.sleep(for: .milliseconds(5))
            }
            try await run.value
            peak = max(peak, Self.bytes(in: cache))
            #expect(finished.all.first?.status == 0, "\(finished.all.first?.stderr ?? "")")
            #expect(samples > 10)
            #expect(peak <= bound, "peak \(peak) bytes, bound \(bound)")
            #expect(peakWAL < 1 << 20, "WAL peak \(peakWAL)")  // SQLite's defaults let it reach 4 MB
            let statistics = try DiskCache(directory: cache, configuration: .init(sizeLimit: limit)).statistics()
            #expect(statistics.evictions > 0 && statistics.count > 0)
        }
    }

    /// The apparent size of every regular file under `folder` (files removed while listing count 0).
    static func bytes(in folder: URL) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return 0 }
        var total = 0
        while let relative = walker.nextObject() as? String {
            var info = stat()
            guard lstat(folder.path + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            total += Int(info.st_size)
        }
        return total
    }
}
