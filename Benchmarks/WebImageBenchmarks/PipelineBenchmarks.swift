import Benchmark
import Foundation
import WebImage

// Targets (issue 9), checked by scripts/bench-report:
// - pipeline overhead for a cold 1 MP JPEG ≤ 5 % over the downloader + JPEGCoder alone (paired);
// - memory hit: image(for:) ≤ 200 ns, cachedImage(forKey:) ≤ 60 ns (WebImageBenchmarks.swift);
// - 10,000 callers of one URL: one request, one decode, ≤ 3 µs per extra caller.

/// The paired overhead benchmark's measurements.
enum OverheadMetric {
    static let pipeline = BenchmarkMetric.custom("pipeline_ns")
    static let plain = BenchmarkMetric.custom("downloader_decoder_ns")
    /// (downloader + decoder time ÷ pipeline time) × 1000: 950 means 5 % overhead.
    static let ratio = BenchmarkMetric.custom("ratio_permille", polarity: .prefersLarger, useScalingFactor: false)
}

func pipelineBenchmarks() {
    // A-B-B-A in every iteration: the pipeline (no caches) and the same downloader + JPEGCoder
    // called directly, so the ratio is not swayed by the machine's drift between benchmarks.
    Benchmark("Paired cold 1 MP JPEG: pipeline vs downloader + decoder", configuration: .init(maxDuration: .seconds(10), maxIterations: 60)) { benchmark in
        let f = try await fixtures()
        let downloader = ImageDownloader()
        let pipeline = ImagePipeline(configuration: .init(downloader: downloader, memoryCache: nil, dataCache: nil))
        let clock = ContinuousClock()
        for index in benchmark.scaledIterations {
            var plainTime = Duration.zero, ourTime = Duration.zero
            for step in 0..<4 {
                if (step == 0 || step == 3) == index.isMultiple(of: 2) {
                    plainTime += try await clock.measure {
                        let result = try await downloader.download(f.url)
                        blackHole(try JPEGCoder().decode(result.data, options: .default))
                    }
                } else {
                    ourTime += try await clock.measure { blackHole(try await pipeline.image(for: f.url)) }
                }
            }
            let plain = Int(plainTime / .nanoseconds(1)), ours = Int(ourTime / .nanoseconds(1))
            benchmark.measurement(OverheadMetric.plain, plain)
            benchmark.measurement(OverheadMetric.pipeline, ours)
            benchmark.measurement(OverheadMetric.ratio, plain * 1000 / max(ours, 1))
        }
    }

    // 10,000 callers of one URL against a fresh pipeline each iteration: one request, one decode;
    // wall clock ÷ 10,000 is the cost per caller (the download itself is a few ms of it).
    Benchmark("10,000 callers of one URL (per batch)", configuration: .init(maxDuration: .seconds(10), maxIterations: 30)) { benchmark in
        let f = try await fixtures()
        for _ in benchmark.scaledIterations {
            let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
            benchmark.startMeasurement()
            // Unstructured tasks: a task group's child removal searches its list, which alone
            // made 10,000 children cost ~14 µs each (perf: TaskGroup::removeChildTask).
            let callers = (0..<10_000).map { _ in Task { blackHole(try await pipeline.image(for: f.url)) } }
            for caller in callers { try await caller.value }
            benchmark.stopMeasurement()
            precondition(pipeline.statistics.downloads == 1 && pipeline.statistics.decodes == 1)
        }
    }

    // One caller, for the per-caller subtraction above.
    Benchmark("1 caller of one URL (per batch)", configuration: .init(maxDuration: .seconds(10), maxIterations: 30)) { benchmark in
        let f = try await fixtures()
        for _ in benchmark.scaledIterations {
            let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
            benchmark.startMeasurement()
            blackHole(try await pipeline.image(for: f.url))
            benchmark.stopMeasurement()
        }
    }
}
