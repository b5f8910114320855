import Foundation
import Testing
import WebImage
import WebImageOrigin

/// What a pipeline keeps in memory between loads counts in its memory budget and is given back
/// before work waits: the bytes of a broken body kept to resume it, and the memory data cache.
@Suite("Kept bytes in the memory budget")
struct BudgetReclaimTests {
    @Test func bytesKeptToResumeCountAndAreDroppedWhenWorkNeedsRoom() async throws {
        try await withOrigin { origin in
            let budget = MemoryBudget(limit: 1 << 20)
            var downloader = ImageDownloaderConfiguration()
            downloader.retryPolicy = .none
            var configuration = ImagePipeline.Configuration(
                downloader: ImageDownloader(configuration: downloader), memoryCache: nil)
            configuration.memoryBudget = budget
            let pipeline = ImagePipeline(configuration: configuration)
            let url = origin.url("/flaky/photo.jpg?fails=1&cut=20000")
            // The first answer breaks after 20,000 bytes, which the downloader keeps for a resume.
            await #expect(throws: ImagePipelineError.self) { try await pipeline.data(for: ImageRequest(url: url)).data.count }
            #expect(await eventually { budget.inUse == 20_000 }, "\(budget.inUse) in use with 20,000 bytes kept")
            // Work that needs the room gets it at once: the kept bytes are dropped.
            let work = try await budget.reserve(budget.limit - 10_000, waitingAtMost: .zero)
            #expect(budget.inUse == budget.limit - 10_000)
            work.release()
            // Nothing to resume from now: the next load asks for the whole image again.
            let data = try await pipeline.data(for: ImageRequest(url: url)).data
            #expect(data == SampleFiles.standard["photo.jpg"])
            #expect(origin.requests.last?.headers["range"] == nil)
        }
    }

    @Test func theMemoryDataCacheCountsAndGivesMemoryBack() async throws {
        try await withOrigin { origin in
            let budget = MemoryBudget(limit: 4 << 20)
            var configuration = ImagePipeline.Configuration(memoryCache: nil, memoryDataCache: MemoryDataCache(costLimit: 8 << 20))
            configuration.memoryBudget = budget
            let pipeline = ImagePipeline(configuration: configuration)
            let original = try #require(SampleFiles.standard["photo.jpg"])
            var request = ImageRequest(url: origin.imageURL("photo.jpg"), options: [.queryMemoryData])
            request.context.storePolicy.original = .memory
            _ = try await pipeline.data(for: request).data.count
            #expect(await eventually { budget.inUse == original.count }, "\(budget.inUse) in use, \(original.count) cached")
            let work = try await budget.reserve(budget.limit - 1000, waitingAtMost: .zero)
            #expect(budget.inUse == budget.limit - 1000, "the cached bytes were given back")
            work.release()
        }
    }
}
