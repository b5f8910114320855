import Foundation
import InMemoryTracing
import Metrics
import MetricsTestKit
import Testing
import Tracing
import WebImage
import WebImageOrigin

/// The process-wide tracer and metrics factory, installed once for the test process (both
/// systems can be bootstrapped only once). Other tests' pipelines made earlier keep no-op handlers.
enum Observed {
    static let tracer = InMemoryTracer()
    static let metrics = TestMetrics()
    static let installed: Bool = {
        InstrumentationSystem.bootstrap(tracer)
        MetricsSystem.bootstrap(metrics)
        return true
    }()
}

@Suite("Logs, metrics and traces per stage")
struct ObservabilityTests {
    @Test func aRequestIsTracedThroughDataDecodeAndProcessAndCounted() async throws {
        #expect(Observed.installed)
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("logo.png", query: "trace=1")
            _ = try await pipeline.image(for: ImageRequest(url: url, options: .waitStoreCache).processed(by: [KeepLeft(fraction: 0.5)]))

            let spans = Observed.tracer.finishedSpans
            let requests = spans.filter { $0.operationName == "webimage.request" && Self.string($0.attributes["webimage.url"]) == url.absoluteString }
            let request = try #require(requests.first)
            let trace = spans.filter { $0.traceID == request.traceID }
            func span(_ name: String) -> FinishedInMemorySpan? { trace.first { $0.operationName == name } }
            let image = try #require(span("webimage.image"))
            let decode = try #require(span("webimage.decode"))
            let data = try #require(span("webimage.data"))
            let process = try #require(span("webimage.process"))
            // request → image → decode → data, and process inside the image stage.
            #expect(image.parentSpanID == request.spanID)
            #expect(decode.parentSpanID == image.spanID)
            #expect(data.parentSpanID == decode.spanID)
            #expect(process.parentSpanID == image.spanID)
            #expect(Self.string(data.attributes["webimage.source"]) == "network")

            let jobs = try Observed.metrics.expectCounter("webimage_pipeline_jobs_total", [("stage", "data")])
            #expect(jobs.totalValue >= 1)
            let decodeTime = try Observed.metrics.expectTimer("webimage_pipeline_stage_seconds", [("stage", "decode")])
            #expect(decodeTime.values.count >= 1)
            let processTime = try Observed.metrics.expectTimer("webimage_pipeline_stage_seconds", [("stage", "process")])
            #expect(processTime.values.count >= 1)
            let network = try Observed.metrics.expectCounter("webimage_pipeline_images_total", [("source", "network")])
            #expect(network.totalValue >= 1)
        }
    }

    static func string(_ attribute: (any SpanAttributeConvertible)?) -> String? {
        if case .string(let value)? = attribute?.toSpanAttribute() { return value }
        return nil
    }
}
