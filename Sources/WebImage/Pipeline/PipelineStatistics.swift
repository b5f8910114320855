import Metrics
import Synchronization

/// How much work a pipeline did since it was made.
///
/// ```swift
/// _ = try await pipeline.image(for: request)
/// print(pipeline.statistics.downloads, pipeline.statistics.decodes)   // 1 1
/// ```
public struct PipelineStatistics: Sendable, Equatable {
    /// Network downloads the data stage asked for (conditional requests included).
    public var downloads: Int
    /// Full decodes (previews and header reads not counted).
    public var decodes: Int
    /// Processor chains applied.
    public var processings: Int
    /// Processed variants found on disk (decoded, not processed again).
    public var variantDiskHits: Int
    /// Original bytes served from the memory-data cache.
    public var memoryDataHits: Int
    /// Jobs started per stage: data, decode, image.
    public var dataJobs: Int, decodeJobs: Int, imageJobs: Int
}

/// The counters behind ``PipelineStatistics`` (atomics: counted on hot paths).
final class PipelineCounters: Sendable {
    let downloads = Atomic<Int>(0)
    let decodes = Atomic<Int>(0)
    let processings = Atomic<Int>(0)
    let variantDiskHits = Atomic<Int>(0)
    let memoryDataHits = Atomic<Int>(0)

    func snapshot(jobs: (Int, Int, Int)) -> PipelineStatistics {
        PipelineStatistics(
            downloads: downloads.load(ordering: .relaxed), decodes: decodes.load(ordering: .relaxed),
            processings: processings.load(ordering: .relaxed), variantDiskHits: variantDiskHits.load(ordering: .relaxed),
            memoryDataHits: memoryDataHits.load(ordering: .relaxed), dataJobs: jobs.0, decodeJobs: jobs.1, imageJobs: jobs.2)
    }
}

/// The pipeline's swift-metrics instruments, made once per pipeline (not per image):
/// images delivered by source, cache hits by kind, and the time each stage takes.
///
/// | metric | dimensions |
/// |---|---|
/// | `webimage_pipeline_images_total` | `source`: memory, disk, network |
/// | `webimage_pipeline_cache_hits_total` | `kind`: memory, memory_data, disk, variant_disk, revalidated, stale |
/// | `webimage_pipeline_stage_seconds` (timer) | `stage`: data, decode, process |
/// | `webimage_pipeline_jobs_total` | `stage`: data, decode, image (work started, not joined) |
/// | `webimage_pipeline_failed_list_hits_total`, `webimage_disk_cache_store_failures_total` | — |
struct PipelineMetrics: Sendable {
    let memoryHits = Counter(label: "webimage_pipeline_images_total", dimensions: [("source", "memory")])
    let diskImages = Counter(label: "webimage_pipeline_images_total", dimensions: [("source", "disk")])
    let networkLoads = Counter(label: "webimage_pipeline_images_total", dimensions: [("source", "network")])
    let memoryDataHits = Self.hits("memory_data")
    let diskHits = Self.hits("disk")
    let variantDiskHits = Self.hits("variant_disk")
    let revalidations = Self.hits("revalidated")
    let staleServed = Self.hits("stale")
    let failedListHits = Counter(label: "webimage_pipeline_failed_list_hits_total")
    let diskStoreFailures = Counter(label: "webimage_disk_cache_store_failures_total")
    let dataDuration = Self.stage("data")
    let decodeDuration = Self.stage("decode")
    let processDuration = Self.stage("process")
    let dataJobs = Self.jobs("data")
    let decodeJobs = Self.jobs("decode")
    let imageJobs = Self.jobs("image")

    private static func hits(_ kind: String) -> Counter {
        Counter(label: "webimage_pipeline_cache_hits_total", dimensions: [("kind", kind)])
    }

    private static func stage(_ name: String) -> Metrics.Timer {
        Metrics.Timer(label: "webimage_pipeline_stage_seconds", dimensions: [("stage", name)])
    }

    private static func jobs(_ stage: String) -> Counter {
        Counter(label: "webimage_pipeline_jobs_total", dimensions: [("stage", stage)])
    }
}
