import AsyncHTTPClient
import Benchmark
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebImage
import WebImageOrigin
import WebImageURLSession

// Targets (issue 3), checked by scripts/measure/bench-report from these benchmarks' results:
// - 2,000 small (10–50 KB) + 20 large (5 MB) images at concurrency 6: the downloader reaches
//   ≥ 0.9 × the throughput of a plain AsyncHTTPClient loop doing the same requests;
// - coalescing 1,000 concurrent callers of one URL costs < 10 µs per extra caller;
// - a 200 MB body raises peak memory by ≤ body size + 32 MB.

/// The loading fixtures: an origin with 2,000 small and 20 large bodies.
final class LoadingFixtures: Sendable {
    let origin: ImageOrigin
    let urls: [URL]
    let client: HTTPClient

    init() async throws {
        var files: [String: Data] = [:]
        let smallBodies = (0..<40).map { n in randomBytes(10_000 + n * 1_000) }
        for n in 0..<2000 { files["s\(n).jpg"] = smallBodies[n % smallBodies.count] }
        let large = randomBytes(5 << 20)
        for n in 0..<20 { files["l\(n).jpg"] = large }
        let origin = try await ImageOrigin.start(files: files)
        self.origin = origin
        urls = (0..<2000).map { origin.imageURL("s\($0).jpg") } + (0..<20).map { origin.imageURL("l\($0).jpg") }
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    }
}

/// `count` random bytes (incompressible, like image data), eight at a time.
func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var words = (0..<(count + 7) / 8).map { _ in generator.next() }
    return words.withUnsafeMutableBytes { Data($0.prefix(count)) }
}

let sharedLoadingFixtures = Once { try await LoadingFixtures() }

func loadingFixtures() async throws -> LoadingFixtures { try await sharedLoadingFixtures.value() }

/// Runs `work` over `items` with at most `width` at once.
func forEachConcurrently<T: Sendable>(_ items: [T], width: Int, _ work: @escaping @Sendable (T) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(width, items.count) { let item = items[next]; group.addTask { try await work(item) }; next += 1 }
        while try await group.next() != nil {
            if next < items.count { let item = items[next]; group.addTask { try await work(item) }; next += 1 }
        }
    }
}

/// The paired batch benchmark's measurements.
enum BatchMetric {
    static let downloader = BenchmarkMetric.custom("downloader_ns")
    static let plain = BenchmarkMetric.custom("plain_ns")
    /// (plain time ÷ downloader time) × 1000: the downloader's throughput relative to the loop's.
    static let ratio = BenchmarkMetric.custom("ratio_permille", polarity: .prefersLarger, useScalingFactor: false)
}

/// The plain URLSession loop (FoundationNetworking): the same requests, 6 at once.
func plainSessionBatch(_ session: URLSession, _ f: LoadingFixtures) async throws {
    try await forEachConcurrently(f.urls, width: 6) { url in
        let (data, response) = try await session.data(from: url)
        precondition((response as? HTTPURLResponse)?.statusCode == 200)
        blackHole(data)
    }
}

/// The plain AsyncHTTPClient loop: the same requests, 6 at once, bodies collected.
func plainClientBatch(_ f: LoadingFixtures) async throws {
    try await forEachConcurrently(f.urls, width: 6) { url in
        let response = try await f.client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
        blackHole(try await response.body.collect(upTo: 64 << 20))
    }
}

/// The downloader: every request handed over at once; its queue keeps 6 running.
func downloaderBatch(_ downloader: ImageDownloader, _ f: LoadingFixtures) async throws {
    try await forEachConcurrently(f.urls, width: f.urls.count) { url in blackHole(try await downloader.download(url)) }
}

func loadingBenchmarks() {
    // Paired: every iteration runs the plain loop and the downloader on the same requests, in
    // A-B-B-A order, and records the ratio of the two. Measured as separate benchmarks, the
    // two ran seconds apart and the ratio swung between 0.75× and 1.1× with the order and the
    // state of the process; a ratio per pair cancels that drift.
    let batch = Benchmark.Configuration(
        metrics: [.wallClock, BatchMetric.downloader, BatchMetric.plain, BatchMetric.ratio], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 20)
    for kind in ["AsyncHTTPClient", "URLSession"] {
        Benchmark("Paired batch 2000 small + 20 large over \(kind): downloader vs plain loop", configuration: batch) { benchmark in
            let f = try await loadingFixtures()
            let loader: any DataLoading
            let plainBatch: @Sendable () async throws -> Void
            if kind == "URLSession" {
                let session = URLSession(configuration: URLSessionConfiguration.ephemeral)
                loader = URLSessionDataLoader()
                plainBatch = { try await plainSessionBatch(session, f) }
            } else {
                loader = HTTPDataLoader(client: f.client)
                plainBatch = { try await plainClientBatch(f) }
            }
            let downloader = ImageDownloader(loader: loader)
            let clock = ContinuousClock()
            for index in benchmark.scaledIterations {
                // A-B-B-A (or B-A-A-B): each side runs twice per iteration, so a drift within
                // the iteration weighs on both equally.
                var plainTime = Duration.zero, ourTime = Duration.zero
                for step in 0..<4 {
                    if (step == 0 || step == 3) == index.isMultiple(of: 2) {
                        plainTime += try await clock.measure { try await plainBatch() }
                    } else {
                        ourTime += try await clock.measure { try await downloaderBatch(downloader, f) }
                    }
                }
                let plainNanoseconds = Int(plainTime / .nanoseconds(1)), ourNanoseconds = Int(ourTime / .nanoseconds(1))
                benchmark.measurement(BatchMetric.plain, plainNanoseconds)
                benchmark.measurement(BatchMetric.downloader, ourNanoseconds)
                benchmark.measurement(BatchMetric.ratio, plainNanoseconds * 1000 / max(ourNanoseconds, 1))
            }
        }
    }

    let coalescing = Benchmark.Configuration(metrics: [.wallClock], maxDuration: .seconds(5))
    for callers in [1, 1000] {
        Benchmark("Coalescing: \(callers) concurrent caller(s) of one URL", configuration: coalescing) { benchmark in
            let f = try await loadingFixtures()
            let downloader = ImageDownloader(loader: HTTPDataLoader(client: f.client))
            // The origin waits 20 ms before answering, so every caller joins the one download;
            // (1000-caller time − 1-caller time) / 999 is the cost of one extra caller.
            let url = f.origin.imageURL("s0.jpg", query: "delay=20")
            benchmark.startMeasurement()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<callers { group.addTask { blackHole(try await downloader.download(url)) } }
                try await group.waitForAll()
            }
        }
    }

    let memory = Benchmark.Configuration(metrics: [.wallClock, .peakMemoryResident], maxDuration: .seconds(20), maxIterations: 3)
    Benchmark("Memory baseline (fixtures only)", configuration: memory) { benchmark in
        let f = try await loadingFixtures()
        blackHole(f)
    }
    for kind in ["AsyncHTTPClient", "URLSession"] {
        Benchmark("Download a 200 MB body over \(kind)", configuration: memory) { benchmark in
            let f = try await loadingFixtures()
            var configuration = ImageDownloaderConfiguration()
            configuration.maxBodySize = 256 << 20
            configuration.timeout = .seconds(60)
            let loader: any DataLoading = kind == "URLSession" ? URLSessionDataLoader() : HTTPDataLoader(client: f.client)
            let downloader = ImageDownloader(loader: loader, configuration: configuration)
            benchmark.startMeasurement()
            blackHole(try await downloader.download(f.origin.url("/big?size=\(200 << 20)&chunk=262144")).data.count)
        }
    }
}
