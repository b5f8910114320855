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

    @Test func theMemoryCachesKeepAVaryResponseOnlyForTheSameValues() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=max-age%3D600&vary=X-Pick")
            let memory = MemoryCache()
            let loader = try pipeline(directory, memory: memory)
            let logoWidth = try ImageCoderRegistry.default.readHeader(try #require(SampleFiles.standard["logo.png"])).pixelWidth
            let smallWidth = try ImageCoderRegistry.default.readHeader(try #require(SampleFiles.standard["small.jpg"])).pixelWidth
            #expect(logoWidth != smallWidth)
            let logo = try await loader.image(for: request(url, pick: "logo.png"))
            #expect(logo.source == .network && logo.image.pixelWidth == logoWidth)
            // Kept, but under the key plus the values sent: never under the plain key.
            #expect(memory.count == 1 && loader.cachedImage(forKey: url.absoluteString) == nil)
            #expect(loader.cachedImage(for: request(url, pick: "logo.png"))?.pixelWidth == logoWidth)
            #expect(loader.cachedImage(for: request(url, pick: "small.jpg")) == nil)
            #expect(loader.cachedImage(for: url) == nil)  // no header: a value of its own
            let small = try await loader.image(for: request(url, pick: "small.jpg").options([.waitStoreCache, .queryMemoryData]))
            #expect(small.source == .network && small.image.pixelWidth == smallWidth)
            // Each value now hits memory with its own image.
            let logoAgain = try await loader.image(for: request(url, pick: "logo.png"))
            #expect(logoAgain.source == .memory && logoAgain.image.pixelWidth == logoWidth)
            let smallAgain = try await loader.image(for: request(url, pick: "small.jpg"))
            #expect(smallAgain.source == .memory && smallAgain.image.pixelWidth == smallWidth)
            // A plain URL load (the fast path) is no value that was kept: from the network.
            let plain = try await loader.image(for: url)
            #expect(plain.source == .network && plain.image.pixelWidth == smallWidth)
            #expect(origin.requestCount(path: "/cache/small.jpg") == 3)
            await loader.flushPendingStores()  // the plain load's disk write, done in the background
            // A new pipeline learns the names from the disk entry: the first load comes from disk,
            // the next from memory, for the value the entry was stored for (the last one: none).
            let fresh = try pipeline(directory, memory: MemoryCache())
            #expect(try await fresh.image(for: request(url, pick: nil)).source == .disk)
            #expect(try await fresh.image(for: request(url, pick: nil)).source == .memory)
            #expect(try await fresh.image(for: request(url, pick: "logo.png")).source == .network)
        }
    }

    @Test func theMemoryDataCacheKeepsAVaryResponseOnlyForTheSameValues() async throws {
        try await withOrigin { origin in
            let url = origin.url("/cache/small.jpg?cc=max-age%3D600&vary=X-Pick")
            var downloader = ImageDownloaderConfiguration()
            downloader.retryPolicy = .none
            let loader = ImagePipeline(configuration: .init(
                downloader: ImageDownloader(configuration: downloader), memoryCache: nil, memoryDataCache: MemoryDataCache()))
            func pick(_ name: String) -> ImageRequest {
                var picked = request(url, pick: name).options([.queryMemoryData])
                picked.context.storePolicy.original = .memory
                return picked
            }
            #expect(try await loader.data(for: pick("logo.png")).source == .network)
            let again = try await loader.data(for: pick("logo.png"))
            #expect(again.source == .memory && again.data == SampleFiles.standard["logo.png"])
            let other = try await loader.data(for: pick("small.jpg"))
            #expect(other.source == .network && other.data == SampleFiles.standard["small.jpg"])
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

    @Test func callersWhoSendDifferentHeadersNeverJoinOneDownloadInFlight() async throws {
        try await withOrigin { origin in
            let url = origin.url("/cache/small.jpg?cc=max-age%3D600&vary=X-Pick&delay=400")
            let loader = try pipeline(temporaryDirectory())
            // Both start while neither's answer is known: its `Vary` cannot tell them apart yet.
            async let logo = loader.data(for: request(url, pick: "logo.png"))
            async let small = loader.data(for: request(url, pick: "small.jpg"))
            let (a, b) = try await (logo, small)
            #expect(a.data == SampleFiles.standard["logo.png"])
            #expect(b.data == SampleFiles.standard["small.jpg"])
            #expect(origin.requestCount(path: "/cache/small.jpg") == 2)
            // The same headers still share one download.
            let shared = origin.url("/cache/logo.png?cc=max-age%3D600&vary=X-Pick&delay=400")
            async let first = loader.data(for: request(shared, pick: "small.jpg"))
            async let second = loader.data(for: request(shared, pick: "small.jpg"))
            let (c, d) = try await (first, second)
            #expect(c.data == SampleFiles.standard["small.jpg"] && d.data == c.data)
            #expect(origin.requestCount(path: "/cache/logo.png") == 1)
        }
    }

    @Test func anAnswerVaryingByAHeaderTheRequestModifierSetsIsNotStored() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            var downloader = ImageDownloaderConfiguration()
            downloader.retryPolicy = .none
            downloader.timeout = TestTime.scaled(.seconds(120))
            // A modifier that picks per call (a tenant, an experiment): a look-up cannot know its value.
            let calls = Locked(0)
            downloader.requestModifier = { request in
                var request = request
                request.headers.append(HTTPField("X-Pick", ["logo.png", "small.jpg"][calls.withLock { $0 += 1; return ($0 - 1) % 2 }]))
                return request
            }
            let memory = MemoryCache()
            let loader = ImagePipeline(configuration: .init(
                downloader: ImageDownloader(configuration: downloader), memoryCache: memory, dataCache: try DiskCache(directory: directory)))
            let url = origin.url("/cache/small.jpg?cc=max-age%3D600&vary=X-Pick")
            let first = try await loader.data(for: request(url, pick: nil))
            #expect(first.data == SampleFiles.standard["logo.png"])
            #expect(await DiskCache.statistics(of: directory).count == 0 && memory.count == 0)
            let second = try await loader.image(for: request(url, pick: nil))
            #expect(second.source == .network)
            #expect(second.image.pixelWidth == (try ImageCoderRegistry.default.readHeader(try #require(SampleFiles.standard["small.jpg"])).pixelWidth))
            #expect(origin.requestCount(path: "/cache/small.jpg") == 2)
            // A `Vary` naming a header the modifier left alone is stored as before.
            let kept = origin.url("/cache/logo.png?cc=max-age%3D600&vary=Accept")
            _ = try await loader.data(for: request(kept, pick: nil))
            #expect(await DiskCache.statistics(of: directory).count == 1)
        }
    }
}
