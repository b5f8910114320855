import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `Vary` through the pipeline's caches, against a real origin whose `/cache/{name}?vary=X-Pick`
/// serves the sample its request's `X-Pick` names (not an identity header: the keys are the
/// same for every value, so only `Vary` keeps the answers apart).
@Suite("Vary: a cached response serves only the same header values")
struct VaryCachingTests {
    func pipeline(_ directory: URL, memory: MemoryCache? = nil) throws -> ImagePipeline {
        var downloader = ImageDownloaderConfiguration()
        downloader.retryPolicy = .none
        downloader.timeout = TestTime.scaled(.seconds(120))
        return ImagePipeline(configuration: .init(
            downloader: ImageDownloader(configuration: downloader), memoryCache: memory, dataCache: try DiskCache(directory: directory)))
    }

    func request(_ url: URL, pick: String?) -> ImageRequest {
        let request = ImageRequest(url: url, options: .waitStoreCache)
        return pick.map { request.header("X-Pick", $0) } ?? request
    }

    @Test func theDiskCacheServesAnEntryOnlyForTheSameValuesOfTheVaryHeaders() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=max-age%3D600&vary=X-Pick")
            #expect(request(url, pick: "logo.png").dataKey == request(url, pick: nil).dataKey)
            let logo = try await pipeline(directory).data(for: request(url, pick: "logo.png"))
            #expect(logo.source == .network && logo.data == SampleFiles.standard["logo.png"])
            #expect(try await DiskCache(directory: directory).entry(for: url.absoluteString)?.metadata.vary == "x-pick:logo.png")
            // Another value: not the stored answer; the origin's answer for it replaces the entry.
            let small = try await pipeline(directory).data(for: request(url, pick: "small.jpg"))
            #expect(small.source == .network && small.data == SampleFiles.standard["small.jpg"])
            let again = try await pipeline(directory).data(for: request(url, pick: "small.jpg"))
            #expect(again.source == .disk && again.data == SampleFiles.standard["small.jpg"])
            // No header at all is a value of its own ("absent").
            let none = try await pipeline(directory).data(for: request(url, pick: nil))
            #expect(none.source == .network && none.data == SampleFiles.standard["small.jpg"])
            #expect(origin.requestCount(path: "/cache/small.jpg") == 3)
        }
    }

    @Test func varyStarIsNeverStored() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=max-age%3D600&vary=*")
            let memory = MemoryCache()
            let loader = try pipeline(directory, memory: memory)
            for _ in 0..<2 {
                #expect(try await loader.image(for: request(url, pick: nil)).source == .network)
            }
            #expect(await DiskCache.statistics(of: directory).count == 0 && memory.count == 0)
            #expect(origin.requestCount(path: "/cache/logo.png") == 2)
        }
    }

    @Test func theMemoryCachesNeverHandAVaryResponseToAnotherValue() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=max-age%3D600&vary=X-Pick")
            let memory = MemoryCache()
            let loader = try pipeline(directory, memory: memory)
            let logo = try await loader.image(for: request(url, pick: "logo.png"))
            let logoWidth = try ImageCoderRegistry.default.readHeader(try #require(SampleFiles.standard["logo.png"])).pixelWidth
            let smallWidth = try ImageCoderRegistry.default.readHeader(try #require(SampleFiles.standard["small.jpg"])).pixelWidth
            #expect(logo.image.pixelWidth == logoWidth && logoWidth != smallWidth)
            // The memory caches keep no image whose response varies: the disk's recorded values decide.
            #expect(memory.count == 0)
            let small = try await loader.image(for: request(url, pick: "small.jpg").options([.waitStoreCache, .queryMemoryData]))
            #expect(small.source == .network && small.image.pixelWidth == smallWidth)
            let sameAgain = try await loader.image(for: request(url, pick: "small.jpg"))
            #expect(sameAgain.source == .disk && sameAgain.image.pixelWidth == smallWidth)
            #expect(origin.requestCount(path: "/cache/small.jpg") == 2)
        }
    }

    @Test func varyValuesReadBackExactly() {
        let stored = HTTPVary.values(of: ["accept", "x-pick"], in: [HTTPField("Accept", "image/webp"), HTTPField("Accept", "image/png")])
        #expect(stored == "accept:image/webp, image/png\nx-pick")
        #expect(HTTPVary.matches(stored, [HTTPField("accept", "image/webp"), HTTPField("ACCEPT", " image/png ")]))
        #expect(!HTTPVary.matches(stored, [HTTPField("Accept", "image/webp")]))
        #expect(!HTTPVary.matches(stored, [HTTPField("Accept", "image/webp"), HTTPField("Accept", "image/png"), HTTPField("X-Pick", "")]))
        #expect(HTTPVary.matches(nil, []))
    }
}
