import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The pipeline stores through the memory cache's weak layer: the box the cache keeps is the
/// one each response holds, so an image evicted from the LRU while a caller still holds it is
/// found again, without a download or a decode.
@Suite("Pipeline: the weak memory layer")
struct WeakMemoryLayerTests {
    @Test func anEvictedImageStillHeldIsReturnedWithoutDecoding() async throws {
        try await withOrigin { origin in
            let memory = MemoryCache()
            let pipeline = try makeTestPipeline(cacheDirectory: nil, memory: memory)
            let heldURL = origin.imageURL("logo.png"), droppedURL = origin.imageURL("small.jpg")
            let held = try await pipeline.image(for: heldURL)
            _ = try await pipeline.image(for: ImageRequest(url: droppedURL))
            #expect(pipeline.statistics.decodes == 2 && memory.count == 2)
            memory.trim(toCost: 0)   // memory pressure: the LRU is empty
            #expect(memory.count == 0)

            // Held by a caller: found again, the very same box, no download, no decode.
            let again = try await pipeline.image(for: heldURL)
            #expect(again.source == .memory && again.reference === held.reference)
            let asRequest = try await pipeline.image(for: ImageRequest(url: heldURL))
            #expect(asRequest.source == .memory && asRequest.reference === held.reference)
            #expect(pipeline.statistics.decodes == 2 && pipeline.statistics.downloads == 2)
            // Dropped by every caller: gone with the eviction, loaded and decoded again.
            let reloaded = try await pipeline.image(for: ImageRequest(url: droppedURL))
            #expect(reloaded.source == .network && pipeline.statistics.decodes == 3)
            withExtendedLifetime(held) {}
        }
    }

    @Test func withoutTheWeakLayerAnEvictedImageIsDecodedAgain() async throws {
        try await withOrigin { origin in
            let memory = MemoryCache(configuration: .init(usesWeakLayer: false))
            let pipeline = try makeTestPipeline(cacheDirectory: nil, memory: memory)
            let url = origin.imageURL("logo.png")
            let held = try await pipeline.image(for: url)
            memory.trim(toCost: 0)
            #expect(try await pipeline.image(for: url).source == .network && pipeline.statistics.decodes == 2)
            withExtendedLifetime(held) {}
        }
    }
}
