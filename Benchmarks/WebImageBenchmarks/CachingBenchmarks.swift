import Benchmark
import Foundation
import WebImage

// Targets (issue 10):
// - disk hit (data only, checksum verified) ≥ 0.8 × reading the same files with FileManager, in
//   the same run (paired: each iteration reads every file both ways, alternating);
// - start-up (open + first look-up) with 100,000 entries ≤ 50 ms;
// - store throughput (MB/s) with and without fsync, reported.

/// A disk cache of 200 × 50 KB entries and the same bytes as plain files.
final class CachingFixtures: Sendable {
    let cache: DiskCache
    let keys: [String]
    let plainFiles: [URL]

    init() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(UUID().uuidString)")
        cache = try DiskCache(directory: root.appendingPathComponent("cache"), configuration: .init(synchronousWrites: false))
        let plain = root.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        keys = (0..<200).map { "https://example.com/images/\($0).jpg" }
        plainFiles = (0..<200).map { plain.appendingPathComponent("\($0).jpg") }
        for (key, file) in zip(keys, plainFiles) {
            let bytes = randomBytes(50_000)
            try cache.store(bytes, for: key)
            try bytes.write(to: file)
        }
    }
}

/// A directory holding a 100,000-entry cache (made once; about a minute).
func makeBigCache() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-big-\(UUID().uuidString)")
    let big = try DiskCache(directory: directory, configuration: .init(synchronousWrites: false))
    let small = randomBytes(200)
    for n in 0..<100_000 { try big.store(small, for: "https://example.com/\(n).jpg") }
    return directory
}

let sharedCachingFixtures = Once { try CachingFixtures() }
let sharedBigCache = Once { try makeBigCache() }

enum CacheMetric {
    static let disk = BenchmarkMetric.custom("disk_cache_ns")
    static let plain = BenchmarkMetric.custom("plain_read_ns")
}

func cachingBenchmarks() {
    memoryCacheBenchmarks()
    let paired = Benchmark.Configuration(metrics: [.wallClock, CacheMetric.disk, CacheMetric.plain], maxIterations: 50)
    Benchmark("Paired disk hit (data only) vs FileManager read, 200 × 50 KB", configuration: paired) { benchmark in
        let f = try await sharedCachingFixtures.value()
        var diskTotal: Duration = .zero, plainTotal: Duration = .zero
        let clock = ContinuousClock()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for (key, file) in zip(f.keys, f.plainFiles) {
                diskTotal += clock.measure { blackHole(f.cache.entry(for: key)?.data) }
                plainTotal += clock.measure { blackHole(FileManager.default.contents(atPath: file.path)) }
            }
        }
        benchmark.stopMeasurement()
        // Nanoseconds per file, averaged over the run.
        let reads = Double(f.keys.count * benchmark.scaledIterations.count)
        benchmark.measurement(CacheMetric.disk, Int(diskTotal / .nanoseconds(1) / reads))
        benchmark.measurement(CacheMetric.plain, Int(plainTotal / .nanoseconds(1) / reads))
    }

    Benchmark("Disk cache start-up with 100,000 entries (open + first look-up)", configuration: .init(maxIterations: 50)) { benchmark in
        let directory = try await sharedBigCache.value()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let cache = try DiskCache(directory: directory)
            blackHole(cache.entry(for: "https://example.com/77777.jpg"))
        }
    }

    for sync in [true, false] {
        let store = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxIterations: 200)
        // MB/s = throughput (stores per second) × 0.262.
        Benchmark("Disk store 256 KB \(sync ? "with" : "without") fsync", configuration: store) { benchmark in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-store-\(UUID().uuidString)")
            let cache = try DiskCache(directory: directory, configuration: .init(synchronousWrites: sync))
            let bytes = randomBytes(256 * 1024)
            var n = 0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try cache.store(bytes, for: "k\(n)")
                n += 1
            }
            benchmark.stopMeasurement()
            try? FileManager.default.removeItem(at: directory)
        }
    }
}

/// The memory cache alone (no pipeline around it), to tell its hit cost from the pipeline's.
func memoryCacheBenchmarks() {
    Benchmark("Memory cache subscript hit (MemoryCache alone)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let cache = MemoryCache()
        let key = "https://example.com/images/avatar-12345.jpg"
        cache[key] = Image(format: .png, pixelWidth: 100, pixelHeight: 100, pixels: [UInt8](repeating: 0, count: 40_000), isOpaque: true)
        for n in 0..<1000 { cache["https://example.com/images/other-\(n).jpg"] = cache[key] }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(cache[key])
        }
    }
}
