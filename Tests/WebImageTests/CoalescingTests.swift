import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Coalescing: one load per key")
struct CoalescingTests {
    @Test func hundredConcurrentCallsCauseOneOriginRequest() async throws {
        try await withOrigin { origin in
            let pipeline = try makePipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("photo.jpg", query: "delay=300")
            let sources = try await withThrowingTaskGroup(of: ImageSource.self) { group in
                for _ in 0..<100 { group.addTask { try await pipeline.image(for: url).source } }
                return try await group.reduce(into: [ImageSource]()) { $0.append($1) }
            }
            #expect(sources.count == 100)
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)
            #expect(sources.filter { $0 == .network }.count >= 1)
        }
    }

    @Test func cancellingOneCallerLeavesTheOthers() async throws {
        try await withOrigin { origin in
            let pipeline = try makePipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("landscape.jpg", query: "delay=500")
            let cancelled = Task { try await pipeline.image(for: url) }
            let kept = Task { try await pipeline.image(for: url) }
            try await Task.sleep(for: .milliseconds(100))
            cancelled.cancel()
            await #expect(throws: ImagePipelineError.self) { _ = try await cancelled.value }
            let response = try await kept.value
            #expect(response.image.pixelWidth == 1600)
            #expect(origin.requestCount(path: "/images/landscape.jpg") == 1)
        }
    }

    @Test func cancellingEveryCallerCancelsTheLoad() async throws {
        try await withOrigin { origin in
            let memory = MemoryCache()
            let pipeline = try makePipeline(cacheDirectory: temporaryDirectory(), memory: memory)
            let url = origin.imageURL("photo.jpg", query: "delay=400")
            let tasks = (0..<3).map { _ in Task { try await pipeline.image(for: url) } }
            try await Task.sleep(for: .milliseconds(100))
            for task in tasks { task.cancel() }
            for task in tasks {
                do {
                    _ = try await task.value
                    Issue.record("expected cancellation")
                } catch {
                    #expect((error as? ImagePipelineError).map { if case .cancelled = $0 { true } else { false } } == true)
                }
            }
            // The shared load was cancelled too: after its delay nothing arrives in the cache.
            try await Task.sleep(for: .milliseconds(600))
            #expect(memory.count == 0)
        }
    }
}
