import AsyncHTTPClient
import Benchmark
import Foundation
import WebImage
import WebImageOrigin

// Targets (issue 2), checked by scripts/measure/bench-report from the p50 values:
// - memory hit through `image(for:)` p50 ≤ 2 µs (issue 9: ≤ 200 ns); through `cachedImage(forKey:)`
//   p50 ≤ 200 ns (issue 9: ≤ 60 ns);
// - cold fetch + decode of a 1 MP JPEG ≤ 1.2 × (plain AsyncHTTPClient download + plain TurboJPEG decode).

/// Process-wide fixtures, made once before the first benchmark.
final class Fixtures: Sendable {
    let origin: ImageOrigin
    let jpeg: Data
    let url: URL
    let warmPipeline: ImagePipeline
    let coldPipeline: ImagePipeline
    let client: HTTPClient

    init() async throws {
        jpeg = try SampleImages.jpeg(width: 1000, height: 1000, seed: 1)
        origin = try await ImageOrigin.start(files: ["photo.jpg": jpeg])
        url = origin.imageURL("photo.jpg")
        warmPipeline = ImagePipeline()
        _ = try await warmPipeline.image(for: url)
        coldPipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    }
}

/// Makes a value once, on first use, however many callers ask: the benchmarks' shared fixtures.
actor Once<Value: Sendable> {
    private let make: @Sendable () async throws -> Value
    private var task: Task<Value, any Error>?

    init(_ make: @escaping @Sendable () async throws -> Value) { self.make = make }

    func value() async throws -> Value {
        if let task { return try await task.value }
        let made = Task { try await make() }
        task = made
        return try await made.value
    }
}

let pipelineFixtures = Once { try await Fixtures() }

func fixtures() async throws -> Fixtures { try await pipelineFixtures.value() }

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(3))
    loadingBenchmarks()
    cachingBenchmarks()

    Benchmark("Memory hit: image(for:) async", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let f = try await fixtures()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await f.warmPipeline.image(for: f.url))
        }
    }

    Benchmark("Memory hit: cachedImage(forKey:) sync", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let f = try await fixtures()
        let key = f.url.absoluteString
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(f.warmPipeline.cachedImage(forKey: key))
        }
    }

    Benchmark("Cold fetch + decode 1 MP JPEG (pipeline)") { benchmark in
        let f = try await fixtures()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await f.coldPipeline.image(for: f.url))
        }
    }

    Benchmark("Plain AsyncHTTPClient download 1 MP JPEG") { benchmark in
        let f = try await fixtures()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let response = try await f.client.execute(HTTPClientRequest(url: f.url.absoluteString), timeout: .seconds(15))
            blackHole(try await response.body.collect(upTo: 50 << 20))
        }
    }

    // Plain TurboJPEG into a new (uninitialised) buffer per decode, as any decoder that returns
    // an image must allocate one: the difference to JPEGCoder is the wrapper's own cost.
    Benchmark("Plain TurboJPEG decode 1 MP JPEG") { benchmark in
        let f = try await fixtures()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(PlainDecode.jpeg(f.jpeg, width: 1000, height: 1000))
        }
    }

    Benchmark("Decode 1 MP JPEG (JPEGCoder)") { benchmark in
        let f = try await fixtures()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try JPEGCoder().decode(f.jpeg, options: .default))
        }
    }

    pipelineBenchmarks()
    codingBenchmarks()
    processingBenchmarks()
    plainDecodeBenchmarks()
}
