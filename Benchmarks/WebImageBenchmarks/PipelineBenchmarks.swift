import Benchmark
import Foundation
import WebImage
import WebImageOrigin

// Targets (issue 9), checked by scripts/measure/bench-report:
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
    let paired = Benchmark.Configuration(
        metrics: [.wallClock, OverheadMetric.pipeline, OverheadMetric.plain, OverheadMetric.ratio], timeUnits: .milliseconds,
        maxDuration: .seconds(15), maxIterations: 60)
    Benchmark("Paired cold 1 MP JPEG: pipeline vs downloader + decoder", configuration: paired) { benchmark in
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

    // 10,000 callers of one URL against a fresh pipeline each iteration, and one caller: the
    // origin holds the response 300 ms so that all 10,000 join one job (one request, one decode —
    // without the hold, callers made after the job had finished started more downloads on a
    // loaded machine). The hold is idle time and is taken out; making the callers happened during
    // it and is counted back in. extra_caller_ns = (busy(10,000) − busy(1)) ÷ 9,999.
    let callers = Benchmark.Configuration(
        metrics: [.wallClock, CallerMetric.extraCaller], timeUnits: .milliseconds, maxDuration: .seconds(20), maxIterations: 20)
    Benchmark("10,000 callers of one URL: per extra caller", configuration: callers) { benchmark in
        let f = try await fixtures()
        let hold = Duration.milliseconds(300)
        let url = f.origin.imageURL("photo.jpg", query: "delay=\(Int(hold / .milliseconds(1)))")
        for _ in benchmark.scaledIterations {
            var busy: [Int: Duration] = [:]
            for count in [1, 10_000] {
                let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
                let started = ContinuousClock.now
                let made = try await callImage(count, pipeline: pipeline, url: url)
                busy[count] = ContinuousClock.now - started - hold + (made - started)
                precondition(pipeline.statistics.downloads == 1 && pipeline.statistics.decodes == 1)
            }
            let extra = (busy[10_000]! - busy[1]!) / 9_999
            benchmark.measurement(CallerMetric.extraCaller, Int(extra / .nanoseconds(1)))
        }
    }

    // The floor beside it, made and awaited the same way: 10,000 tasks that only wait on a
    // continuation until one object is handed to all of them (each takes a reference, as each
    // caller of one image takes its response). Nothing any sharing does can cost less.
    let floor = Benchmark.Configuration(
        metrics: [.wallClock, CallerMetric.floorCaller], timeUnits: .milliseconds, maxDuration: .seconds(10), maxIterations: 20)
    Benchmark("10,000 callers of one URL: floor per task", configuration: floor) { benchmark in
        for _ in benchmark.scaledIterations {
            let waiters = BareWaiters<SharedResult>(expected: 10_000)
            let started = ContinuousClock.now
            let tasks = (0..<10_000).map { _ in Task { blackHole(await waiters.wait()) } }
            await waiters.waitUntilAllIn()
            waiters.resumeAll(with: SharedResult())
            for task in tasks { await task.value }
            benchmark.measurement(CallerMetric.floorCaller, Int((ContinuousClock.now - started) / .nanoseconds(10_000)))
        }
    }
}

/// The sharing benchmark's measurements.
enum CallerMetric {
    static let extraCaller = BenchmarkMetric.custom("extra_caller_ns", useScalingFactor: false)
    static let floorCaller = BenchmarkMetric.custom("floor_caller_ns", useScalingFactor: false)
}

/// `count` callers of `url`, made and awaited off the main actor (as a server's request handlers
/// are); returns when the last was made. Unstructured tasks: a task group's child removal searches
/// its list, which alone made 10,000 children cost ~14 µs each (perf: TaskGroup::removeChildTask).
func callImage(_ count: Int, pipeline: ImagePipeline, url: URL) async throws -> ContinuousClock.Instant {
    let callers = (0..<count).map { _ in Task { blackHole(try await pipeline.image(for: url)) } }
    let made = ContinuousClock.now
    for caller in callers { try await caller.value }
    return made
}
