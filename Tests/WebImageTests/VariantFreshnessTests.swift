import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

/// A processed variant on disk follows its original, whatever source the original came from:
/// the network, the disk, a `304`, stale-if-error, `no-store`. Each test is one row of that
/// table, against a real origin (`/cache/{name}`) and a real disk cache, with a new pipeline
/// per load (as a new process would be; no memory cache).
@Suite("Variants follow their original")
struct VariantFreshnessTests {
    func pipeline(_ directory: URL, policy: HTTPCachePolicy = .init()) throws -> ImagePipeline {
        var downloader = ImageDownloaderConfiguration()
        downloader.retryPolicy = .none
        downloader.timeout = TestTime.scaled(.seconds(120))
        return ImagePipeline(configuration: .init(
            downloader: ImageDownloader(configuration: downloader), memoryCache: nil,
            dataCache: try DiskCache(directory: directory), httpCachePolicy: policy))
    }

    func variant(_ url: URL) -> ImageRequest {
        ImageRequest(url: url, options: .waitStoreCache).processed(by: [KeepLeft(fraction: 0.5)])
    }

    func original(_ url: URL) -> ImageRequest { ImageRequest(url: url, options: .waitStoreCache) }

    func entry(_ directory: URL, _ key: String) async throws -> CacheMetadata? {
        try await DiskCache(directory: directory).entry(for: key)?.metadata
    }

    func admin(_ origin: ImageOrigin, _ path: String) async throws {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: origin.url(path).absoluteString), timeout: .seconds(10))
        #expect(response.status == .ok)
    }

    @Test func fromTheNetworkTheVariantCarriesTheResponsesFreshnessAndValidators() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=max-age%3D600")
            let first = try pipeline(directory)
            #expect(try await first.image(for: variant(url)).source == .network)
            let stored = try #require(try await entry(directory, variant(url).imageKey))
            let source = try #require(try await entry(directory, url.absoluteString))
            #expect(stored.etag == source.etag && stored.etag != nil)
            #expect(stored.expiresAt == source.expiresAt && stored.expiresAt != nil)
            // Fresh: served from disk with nothing decoded, processed or sent.
            let second = try pipeline(directory)
            #expect(try await second.image(for: variant(url)).source == .disk)
            #expect(second.statistics.variantDiskHits == 1 && second.statistics.processings == 0 && second.statistics.downloads == 0)
            #expect(origin.requestCount(path: "/cache/logo.png") == 1)
        }
    }

    @Test func fromTheDiskTheVariantCarriesTheStoredEntrysFreshness() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=max-age%3D600")
            _ = try await pipeline(directory).image(for: original(url))   // the original alone
            let source = try #require(try await entry(directory, url.absoluteString))
            // A later process makes the variant from the disk's original: it is fresh for the
            // original's remaining 600 s, not for the cache's default 7 days.
            let second = try pipeline(directory)
            #expect(try await second.image(for: variant(url)).source == .disk)
            #expect(second.statistics.processings == 1 && second.statistics.downloads == 0)
            let stored = try #require(try await entry(directory, variant(url).imageKey))
            #expect(stored.expiresAt == source.expiresAt && stored.etag == source.etag)
        }
    }

    @Test func aVariantOfANoStoreResponseIsNeverWrittenToDisk() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=no-store")
            for _ in 0..<2 {
                let loaded = try pipeline(directory)
                #expect(try await loaded.image(for: variant(url)).source == .network)
                #expect(loaded.statistics.processings == 1)
            }
            #expect(await DiskCache.statistics(of: directory).count == 0)
            #expect(origin.requestCount(path: "/cache/logo.png") == 2)
        }
    }

    @Test func aStaleVariantIsRefreshedByThe304OfItsOriginalWithoutProcessing() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=max-age%3D4")
            _ = try await pipeline(directory).image(for: variant(url))
            let before = try #require(try await entry(directory, variant(url).imageKey)?.expiresAt)
            // Four seconds of freshness: on a loaded machine, the loads after the refresh take more than one.
            try await Task.sleep(for: .milliseconds(4100))
            // Stale with its original: the original is revalidated (304) and the variant served
            // again, neither decoded again nor processed.
            let second = try pipeline(directory)
            let revalidated = try await second.image(for: variant(url))
            #expect(revalidated.isRevalidated && revalidated.source == .disk)
            #expect(revalidated.image.pixelWidth == 128)
            #expect(second.statistics.processings == 0 && second.statistics.decodes == 0 && second.statistics.downloads == 1)
            let sent = origin.requests.filter { $0.path == "/cache/logo.png" }
            #expect(sent.count == 2 && sent.last?.status == 304 && sent.last?.headers["if-none-match"] != nil)
            // Its freshness was extended with the original's: fresh again, nothing sent.
            let after = try #require(try await entry(directory, variant(url).imageKey)?.expiresAt)
            #expect(after > before)
            let third = try pipeline(directory)
            #expect(try await third.image(for: variant(url)).source == .disk)
            #expect(third.statistics.downloads == 0 && origin.requestCount(path: "/cache/logo.png") == 2)
        }
    }

    @Test func aVariantIsStaleWhenItsOriginalChangedAndIsMadeAgain() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=no-cache")
            #expect(try await pipeline(directory).image(for: variant(url)).image.pixelWidth == 128)
            try await admin(origin, "/cache-admin/swap/logo.png?to=small.jpg")
            let second = try pipeline(directory)
            let changed = try await second.image(for: variant(url))
            #expect(changed.source == .network && !changed.isRevalidated)
            let expected = try ImageCoderRegistry.default.readHeader(try #require(SampleFiles.standard["small.jpg"])).pixelWidth / 2
            #expect(changed.image.pixelWidth == expected)
            #expect(second.statistics.processings == 1)
            let source = try #require(try await entry(directory, url.absoluteString))
            #expect(try await entry(directory, variant(url).imageKey)?.etag == source.etag)
        }
    }

    @Test func aVariantFollowsAnOriginalRefreshedByAnotherRequest() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=max-age%3D4")
            _ = try await pipeline(directory).image(for: variant(url))
            // Four seconds of freshness: on a loaded machine, the loads after the refresh take more than one.
            try await Task.sleep(for: .milliseconds(4100))
            // The original alone is revalidated (304) ...
            #expect(try await pipeline(directory).image(for: original(url)).isRevalidated)
            // ... and the variant, stale on its own, is served again from the fresh original's word.
            let third = try pipeline(directory)
            let served = try await third.image(for: variant(url))
            #expect(served.source == .disk && third.statistics.processings == 0 && third.statistics.downloads == 0)
            #expect(origin.requestCount(path: "/cache/logo.png") == 2)
        }
    }

    @Test func staleIfErrorServesTheStaleVariantWithoutProcessing() async throws {
        let directory = temporaryDirectory()
        var url: URL?
        try await withOrigin { origin in
            url = origin.url("/cache/logo.png?cc=max-age%3D0")
            _ = try await pipeline(directory).image(for: variant(url!))
            #expect(try await entry(directory, variant(url!).imageKey)?.isFresh(at: Date()) == false)  // stale with its original
        }
        // The origin is stopped: the original's revalidation fails, both are served stale.
        let offline = try pipeline(directory)
        let stale = try await offline.image(for: variant(url!))
        #expect(stale.isStale && stale.source == .disk && stale.image.pixelWidth == 128)
        #expect(offline.statistics.processings == 0 && offline.statistics.decodes == 0)
        // With stale-if-error switched off, the failure comes through for the variant too.
        await #expect(throws: ImagePipelineError.self) {
            _ = try await pipeline(directory, policy: HTTPCachePolicy(staleIfError: false)).image(for: variant(url!))
        }
    }

    @Test func aVariantOfAMustRevalidateOriginalIsNotServedWhenTheOriginFails() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/logo.png?cc=max-age%3D0%2C%20must-revalidate")
            _ = try await pipeline(directory).image(for: variant(url))
            #expect(try await entry(directory, variant(url).imageKey)?.mustRevalidate == true)
            try await admin(origin, "/cache-admin/fail/logo.png?status=500")
            await #expect(throws: ImagePipelineError.loadingFailed(.badStatusCode(500))) {
                _ = try await pipeline(directory).image(for: variant(url))
            }
        }
    }
}
