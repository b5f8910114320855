import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Pipeline options and the two keys")
struct PipelineOptionsTests {
    @Test func thumbnailAndOriginalOfOneURLAreCachedApart() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let memory = MemoryCache()
            let pipeline = try makeTestPipeline(cacheDirectory: directory, memory: memory)
            let url = origin.imageURL("photo.jpg")
            let original = ImageRequest(url: url, options: .waitStoreCache)
            let thumbnail = original.thumbnail(maxPixelSize: 100)
            #expect(original.dataKey == thumbnail.dataKey)
            #expect(original.imageKey != thumbnail.imageKey)
            #expect(original.imageKey == url.absoluteString)

            #expect(try await pipeline.image(for: original).image.pixelWidth == 1000)
            #expect(try await pipeline.image(for: thumbnail).image.pixelWidth == 100)
            #expect(memory[original.imageKey]?.pixelWidth == 1000)
            #expect(memory[thumbnail.imageKey]?.pixelWidth == 100)
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)  // the thumbnail reused the disk's original
            let disk = try DiskCache(directory: directory)
            #expect(await disk.data(for: original.dataKey) == SampleFiles.standard["photo.jpg"])
            let variant = try #require(await disk.data(for: thumbnail.imageKey))
            #expect(try ImageCoderRegistry.default.readHeader(variant).pixelWidth == 100)
        }
    }

    @Test func processedVariantsNeverCollideAndAreNotProcessedAgainFromDisk() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.imageURL("logo.png")
            let half = ImageRequest(url: url, options: .waitStoreCache).processed(by: [KeepLeft(fraction: 0.5)])
            let quarter = ImageRequest(url: url, options: .waitStoreCache).processed(by: [KeepLeft(fraction: 0.25)])
            #expect(Set([half.imageKey, quarter.imageKey, ImageRequest(url: url).imageKey]).count == 3)
            let first = try makeTestPipeline(cacheDirectory: directory)
            #expect(try await first.image(for: half).image.pixelWidth == 128)
            #expect(try await first.image(for: quarter).image.pixelWidth == 64)
            #expect(first.statistics.processings == 2)

            let second = try makeTestPipeline(cacheDirectory: directory)
            let again = try await second.image(for: half)
            #expect(again.source == .disk)
            #expect(again.image.pixelWidth == 128)
            #expect(second.statistics.processings == 0 && second.statistics.decodes == 0 && second.statistics.variantDiskHits == 1)
            #expect(origin.requestCount(path: "/images/logo.png") == 1)
        }
    }

    @Test func fromCacheOnlyNeverTouchesTheNetwork() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let request = ImageRequest(url: origin.imageURL("small.jpg"), options: .fromCacheOnly)
            await #expect(throws: ImagePipelineError.notCached) { _ = try await pipeline.image(for: request) }
            await #expect(throws: ImagePipelineError.notCached) { _ = try await pipeline.data(for: request) }
            #expect(origin.totalRequests == 0)
            _ = try await pipeline.image(for: ImageRequest(url: origin.imageURL("small.jpg"), options: .waitStoreCache))
            #expect(try await pipeline.image(for: request).source == .memory)
            #expect(try await pipeline.data(for: request).source == .disk)
            #expect(origin.totalRequests == 1)
        }
    }

    @Test func fromLoaderOnlyDownloadsAgainAndStores() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("small.jpg")
            _ = try await pipeline.image(for: url)
            let reload = try await pipeline.image(for: ImageRequest(url: url, options: .fromLoaderOnly))
            #expect(reload.source == .network)
            #expect(origin.requestCount(path: "/images/small.jpg") == 2)
            #expect(try await pipeline.image(for: url).source == .memory)
        }
    }

    @Test func memoryAndDiskCanBeSwitchedOffPerRequest() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let memory = MemoryCache()
            let pipeline = try makeTestPipeline(cacheDirectory: directory, memory: memory)
            let url = origin.imageURL("small.jpg")
            let noWrites = ImageRequest(url: url, options: [.disableMemoryWrite, .disableDiskWrite, .waitStoreCache])
            #expect(try await pipeline.image(for: noWrites).source == .network)
            #expect(memory.count == 0)
            #expect(await DiskCache.statistics(of: directory).count == 0)

            _ = try await pipeline.image(for: ImageRequest(url: url, options: .waitStoreCache))
            #expect(memory.count == 1)
            let noMemoryRead = try await pipeline.image(for: ImageRequest(url: url, options: .disableMemoryRead))
            #expect(noMemoryRead.source == .disk)
            let noReads = try await pipeline.image(for: ImageRequest(url: url, options: [.disableMemoryRead, .disableDiskRead]))
            #expect(noReads.source == .network)
            #expect(origin.requestCount(path: "/images/small.jpg") == 3)
        }
    }

    @Test func queryMemoryDataServesOriginalBytesFromMemory() async throws {
        try await withOrigin { origin in
            let bytes = MemoryDataCache()
            let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, memoryDataCache: bytes))
            let url = origin.imageURL("small.jpg")
            var request = ImageRequest(url: url, options: .queryMemoryData)
            request.context.storePolicy.original = .memory
            let first = try await pipeline.data(for: request)
            #expect(first.source == .network)
            #expect(bytes[request.dataKey] == SampleFiles.standard["small.jpg"])
            #expect(try await pipeline.image(for: request).source == .memory)
            #expect(pipeline.statistics.memoryDataHits == 1)
            #expect(origin.totalRequests == 1)
        }
    }

    @Test func queryDiskDataSyncFindsTheDiskInTheCallingTask() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.imageURL("logo.png")
            _ = try await makeTestPipeline(cacheDirectory: directory).image(for: ImageRequest(url: url, options: .waitStoreCache))
            let pipeline = try makeTestPipeline(cacheDirectory: directory)
            let response = try await pipeline.image(for: ImageRequest(url: url, options: .queryDiskDataSync))
            #expect(response.source == .disk)
            #expect(pipeline.statistics.imageJobs == 0)  // no shared job was made for it
        }
    }

    @Test func scaleDownLargeImagesKeepsPixelsWithinTheBudget() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            var request = ImageRequest(url: origin.imageURL("photo.jpg"), options: .scaleDownLargeImages)
            request.context.scaleDownLimitBytes = 400 * 400 * 4
            let image = try await pipeline.image(for: request).image
            #expect(image.pixelWidth <= 400 && image.pixelHeight <= 400)
            #expect(image.pixelWidth >= 300)
            #expect(image.pixels.count <= 400 * 400 * 4)
            // A zero or negative budget is a one-pixel budget, not a trap.
            for nonsense in [0, -1, Int.min] {
                request.context.scaleDownLimitBytes = nonsense
                #expect(try await pipeline.image(for: request).image.pixelWidth == 1)
            }
            // Under the budget nothing changes.
            request.context.scaleDownLimitBytes = 64 << 20
            #expect(try await pipeline.image(for: request).image.pixelWidth == 1000)
        }
    }

    @Test func decodeFirstFrameOnlyAndTransformAnimatedImage() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let url = origin.imageURL("spinner.gif")
            let all = try await pipeline.image(for: url).image
            #expect(all.frames.count == 6)
            let first = try await pipeline.image(for: ImageRequest(url: url, options: .decodeFirstFrameOnly)).image
            #expect(first.frames.isEmpty && first.frameCount == 6)

            let processed = ImageRequest(url: url).processed(by: [KeepLeft(fraction: 0.5)])
            let still = try await pipeline.image(for: processed).image
            #expect(still.frames.isEmpty && still.pixelWidth == 48)
            let animated = try await pipeline.image(for: processed.options(.transformAnimatedImage)).image
            #expect(animated.frames.count == 6 && animated.pixelWidth == 48)
            #expect(animated.frames.map(\.duration) == all.frames.map(\.duration))
        }
    }

    /// An animation decoded to its first frame only, to be processed as an animation (how
    /// `fetch` streams one), is checked as the whole animation before that frame is processed:
    /// 20 frames at 1700 × 1700 is 58 MP (at 7000 × 7000, 980 MP), so the 4 KB GIF is refused
    /// without its frame being enlarged or reserved. The same size as a still is processed.
    @Test func aFirstFrameStandingForAnAnimationIsCheckedAsTheAnimation() async throws {
        let gif = GIFBomb.manyFrames(width: 100, height: 100, frames: 20)
        try await withOrigin(files: ["frames.gif": gif]) { origin in
            let budget = MemoryBudget(limit: 1 << 30)
            var configuration = ImagePipeline.Configuration(memoryCache: nil, dataCache: nil)
            configuration.memoryBudget = budget
            let pipeline = ImagePipeline(configuration: configuration)
            let enlarge = ImageRequest(url: origin.imageURL("frames.gif"), options: .decodeFirstFrameOnly)
                .processed(by: [.resize(width: 1700, height: 1700, mode: .exact, upscale: true)])
            await #expect(throws: ImagePipelineError.processingFailed(.tooLarge(width: 1700, height: 1700))) {
                try await pipeline.image(for: enlarge.options(.transformAnimatedImage)).image.pixelWidth
            }
            #expect(pipeline.statistics.processings == 0)
            #expect(budget.peakReserved < 1700 * 1700 * 4, "the enlarged frame was reserved: \(budget.peakReserved)")
            // Within the limit the first frame is processed as before; as a still, 1700 × 1700 is allowed.
            let small = ImageRequest(url: origin.imageURL("frames.gif"), options: [.decodeFirstFrameOnly, .transformAnimatedImage])
                .processed(by: [.resize(width: 300, height: 300, mode: .exact, upscale: true)])
            let frame = try await pipeline.image(for: small).image
            #expect(frame.pixelWidth == 300 && frame.frameCount == 20)
            let still = try await pipeline.image(for: enlarge).image
            #expect(still.pixelWidth == 1700 && still.pixelHeight == 1700)
        }
    }

    @Test func avoidDecodeDeliversTheHeaderAndTheBytes() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let response = try await pipeline.image(for: ImageRequest(url: origin.imageURL("photo.webp"), options: .avoidDecode))
            #expect(!response.image.isDecoded)
            #expect(response.image.pixelWidth == 640 && response.image.pixelHeight == 480 && response.image.format == .webp)
            #expect(response.data == SampleFiles.standard["photo.webp"])
            #expect(pipeline.statistics.decodes == 0)
            #expect(pipeline.cachedImage(for: origin.imageURL("photo.webp")) == nil)
        }
    }

    @Test func waitStoreCacheReturnsAfterTheDiskHasTheBytes() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try makeTestPipeline(cacheDirectory: directory)
            let request = ImageRequest(url: origin.imageURL("small.jpg"), options: .waitStoreCache)
            _ = try await pipeline.image(for: request)
            #expect(try await DiskCache(directory: directory).data(for: request.dataKey) == SampleFiles.standard["small.jpg"])
            // Without the option the write happens later; flushing waits for it.
            let later = ImageRequest(url: origin.imageURL("logo.png"))
            _ = try await pipeline.image(for: later)
            await pipeline.flushPendingStores()
            #expect(try await DiskCache(directory: directory).data(for: later.dataKey) == SampleFiles.standard["logo.png"])
        }
    }

    @Test func dataForRequestNeverDecodesAndRefusesNonImages() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try makeTestPipeline(cacheDirectory: directory)
            let response = try await pipeline.data(for: ImageRequest(url: origin.imageURL("landscape.jpg"), options: .waitStoreCache))
            #expect(response.source == .network)
            #expect(response.header.pixelWidth == 1600 && response.header.format == .jpeg)
            #expect(pipeline.statistics.decodes == 0)
            await #expect {
                _ = try await pipeline.data(for: ImageRequest(url: origin.url("/text"), options: .waitStoreCache))
            } throws: { error in
                if case .decodingFailed? = error as? ImagePipelineError { return true }
                return (error as? ImagePipelineError).map { if case .loadingFailed(.badContentType) = $0 { true } else { false } } ?? false
            }
            #expect(await DiskCache.statistics(of: directory).count == 1)
        }
    }

    @Test func processorFailureIsTypedAndNothingIsCached() async throws {
        try await withOrigin { origin in
            let memory = MemoryCache()
            let pipeline = try makeTestPipeline(cacheDirectory: nil, memory: memory)
            let request = ImageRequest(url: origin.imageURL("small.jpg")).processed(by: [Refuse()])
            await #expect {
                _ = try await pipeline.image(for: request)
            } throws: { error in
                if case .processingFailed(.invalidParameter)? = error as? ImagePipelineError { return true }
                return false
            }
            #expect(memory.count == 0)
        }
    }
}

@Suite("Pipeline context: key filter, serializer, store policy, coders, downloader")
struct PipelineContextTests {
    @Test func aCacheKeyFilterMakesURLsWithDifferentTokensOneEntry() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let stripQuery = CacheKeyFilter { url in url.absoluteString.components(separatedBy: "?")[0] }
            let a = ImageRequest(url: origin.imageURL("small.jpg", query: "token=a"), options: .waitStoreCache).cacheKeyFilter(stripQuery)
            let b = ImageRequest(url: origin.imageURL("small.jpg", query: "token=b")).cacheKeyFilter(stripQuery)
            #expect(a.dataKey == b.dataKey && a.dataKey == origin.imageURL("small.jpg").absoluteString)
            #expect(try await pipeline.image(for: a).source == .network)
            #expect(try await pipeline.image(for: b).source == .memory)
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)
        }
    }

    @Test func aCacheSerializerDecidesTheVariantsBytesOnDisk() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try makeTestPipeline(cacheDirectory: directory)
            var request = ImageRequest(url: origin.imageURL("photo.jpg"), options: .waitStoreCache).processed(by: [KeepLeft(fraction: 0.5)])
            request.context.cacheSerializer = CacheSerializer { image, _ in try? ImageCoderRegistry.default.encode(image, as: .png) }
            _ = try await pipeline.image(for: request)
            let stored = try #require(await DiskCache(directory: directory).data(for: request.imageKey))
            #expect(ImageFormat(sniffing: stored) == .png)

            // A serializer returning nil keeps the variant off the disk.
            var none = ImageRequest(url: origin.imageURL("photo.jpg"), options: .waitStoreCache).processed(by: [KeepLeft(fraction: 0.25)])
            none.context.cacheSerializer = CacheSerializer { _, _ in nil }
            _ = try await pipeline.image(for: none)
            #expect(try await DiskCache(directory: directory).data(for: none.imageKey) == nil)
        }
    }

    @Test func storePolicyKeepsTheOriginalOffTheDiskWhenAsked() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try makeTestPipeline(cacheDirectory: directory)
            var request = ImageRequest(url: origin.imageURL("photo.jpg"), options: .waitStoreCache).thumbnail(maxPixelSize: 50)
            request.context.storePolicy = StorePolicy(original: .none, final: .all)
            _ = try await pipeline.image(for: request)
            let disk = try DiskCache(directory: directory)
            #expect(await disk.data(for: request.dataKey) == nil)
            #expect(await disk.data(for: request.imageKey) != nil)
        }
    }

    @Test func perRequestCodersAndDownloaderAreUsed() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let other = ImageDownloader()
            var request = ImageRequest(url: origin.imageURL("photo.webp"))
            request.context.downloader = other
            request.context.coders = ImageCoderRegistry(decoders: [JPEGCoder()], encoders: [])
            await #expect(throws: ImagePipelineError.decodingFailed(.unsupportedFormat(.webp))) { _ = try await pipeline.image(for: request) }
            request.context.coders = ImageCoderRegistry(decoders: [WebPCoder()], encoders: [])
            #expect(try await pipeline.image(for: request.options(.retryFailed)).image.pixelWidth == 640)
            #expect(pipeline.statistics.downloads == 2)
        }
    }
}
