import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The disk cache as `webimage fetch` uses it: several runs into one directory, and a size limit.
@Suite("Disk cache under webimage fetch")
struct CacheFetchTests {
    /// 120 distinct URLs (the query makes the cache keys differ) over the 12 thumbnails.
    func urls(_ origin: ImageOrigin, _ range: Range<Int>) -> [URL] {
        range.map { origin.imageURL("thumb-\($0 % 12 + 1).jpg", query: "copy=\($0)") }
    }

    @Test func twoFetchesOfOverlappingListsIntoOneCacheBothSucceed() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            func fetch(_ range: Range<Int>) async throws -> CommandResult {
                try await WebImageCommand.run(
                    ["fetch", "--input", "-", "--output", temporaryDirectory().path, "--cache-dir", cache.path, "--json"],
                    stdin: urls(origin, range).map(\.absoluteString).joined(separator: "\n"))
            }
            async let first = fetch(0..<80)
            async let second = fetch(40..<120)
            let (a, b) = try await (first, second)
            #expect(a.status == 0, "\(a.stderr)")
            #expect(b.status == 0, "\(b.stderr)")

            let disk = try DiskCache(directory: cache)
            for (n, url) in urls(origin, 0..<120).enumerated() {
                let data = await disk.data(for: ImageRequest(url: url).dataKey)
                #expect(data == SampleFiles.standard["thumb-\(n % 12 + 1).jpg"], "\(url)")
            }
            let report = try disk.verify()
            #expect(report.checked == 120 && report.damaged.isEmpty && report.missing.isEmpty)
        }
    }

    @Test func fetchWithACacheSizeLimitStaysWithinIt() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            let observer = try DiskCache(directory: cache)
            let limit = 1 << 20, largest = SampleFiles.standard["landscape.jpg"]!.count
            let list = (0..<60).map { origin.imageURL("landscape.jpg", query: "copy=\($0)").absoluteString }
            let finished = Recorder<CommandResult>()
            let run = Task {
                finished.append(try await WebImageCommand.run(
                    ["fetch", "--input", "-", "--output", temporaryDirectory().path, "--cache-dir", cache.path, "--cache-size-mb", "1"],
                    stdin: list.joined(separator: "\n")))
            }
            var peakIndex = 0, samples = 0
            while finished.all.isEmpty {
                peakIndex = max(peakIndex, try observer.statistics().totalSize)
                samples += 1
                try await Task.sleep(for: .milliseconds(10))
            }
            try await run.value
            #expect(finished.all.first?.status == 0, "\(finished.all.first?.stderr ?? "")")
            #expect(samples > 3)
            #expect(largest * 60 > 2 * limit)  // the run really had to evict
            #expect(peakIndex <= limit)
            #expect(try observer.statistics().evictions > 0)
        }
    }
}
