import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

/// What the pipeline does with each caching header: exact origin request counts, through a real
/// origin (`/cache/{name}` with the header chosen per test) and a real disk cache.
@Suite("HTTP caching through the pipeline")
struct HTTPCachingPipelineTests {
    /// A new pipeline over `directory` each time, as a new process would be (no memory cache).
    func load(
        _ url: URL, _ directory: URL, options: ImageLoadingOptions = [], policy: HTTPCachePolicy = .init()
    ) async throws -> ImageDataResponse {
        try await pipeline(directory, policy: policy).data(for: ImageRequest(url: url, options: options.union(.waitStoreCache)))
    }

    /// No memory cache, no retries, a disk cache in `directory`.
    func pipeline(_ directory: URL, policy: HTTPCachePolicy) throws -> ImagePipeline {
        var downloader = ImageDownloaderConfiguration()
        downloader.retryPolicy = .none
        // These tests count requests, not time: a revalidation that outlived the default 15 s
        // timeout on a loaded machine was served stale (stale-if-error) and counted as missing.
        downloader.timeout = .seconds(120)
        return ImagePipeline(configuration: .init(
            downloader: ImageDownloader(configuration: downloader), memoryCache: nil,
            dataCache: try DiskCache(directory: directory), httpCachePolicy: policy))
    }

    func requests(_ origin: ImageOrigin, _ name: String) -> [LoggedRequest] {
        origin.requests.filter { $0.path == "/cache/\(name)" }
    }

    @Test func warmWithinMaxAgeSendsNothingAndAfterExpiryRevalidatesWith304() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let fresh = origin.url("/cache/small.jpg?cc=max-age%3D60")
            #expect(try await load(fresh, directory).source == .network)                 // cold: 1
            #expect(try await load(fresh, directory).source == .disk)                    // warm: 0
            #expect(requests(origin, "small.jpg").count == 1)

            let expiring = origin.url("/cache/logo.png?cc=max-age%3D1")
            _ = try await load(expiring, directory)
            try await Task.sleep(for: .milliseconds(1100))
            let revalidated = try await load(expiring, directory)
            #expect(revalidated.isRevalidated && revalidated.source == .disk)
            #expect(revalidated.data == SampleFiles.standard["logo.png"])
            let sent = requests(origin, "logo.png")
            #expect(sent.count == 2)
            #expect(sent.last?.headers["if-none-match"] != nil && sent.last?.status == 304)
            // The 304 refreshed the metadata: fresh again, no request.
            #expect(try await load(expiring, directory).source == .disk)
            #expect(requests(origin, "logo.png").count == 2)
        }
    }

    @Test func noStoreIsNeverWrittenToDisk() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=no-store")
            for _ in 0..<3 {
                let response = try await load(url, directory)
                #expect(response.source == .network)
            }
            #expect(requests(origin, "small.jpg").count == 3)
            #expect(await DiskCache.statistics(of: directory).count == 0)
        }
    }

    @Test func noCacheIsRevalidatedEveryTime() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=no-cache")
            #expect(try await load(url, directory).source == .network)
            for _ in 0..<2 {
                let again = try await load(url, directory)
                #expect(again.isRevalidated && again.source == .disk)
            }
            let sent = requests(origin, "small.jpg")
            #expect(sent.count == 3)
            #expect(sent.dropFirst().allSatisfy { $0.status == 304 })
        }
    }

    @Test func aChangedImageIsSeenWithItsNewETag() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=no-cache")
            #expect(try await load(url, directory).data == SampleFiles.standard["small.jpg"])
            let swap = try await HTTPClient.shared.execute(HTTPClientRequest(url: origin.url("/cache-admin/swap/small.jpg?to=thumb-1.jpg").absoluteString), timeout: .seconds(10))
            #expect(swap.status == .ok)
            let changed = try await load(url, directory)
            #expect(changed.source == .network && !changed.isRevalidated)
            #expect(changed.data == SampleFiles.standard["thumb-1.jpg"])
            #expect(try await DiskCache(directory: directory).data(for: url.absoluteString) == SampleFiles.standard["thumb-1.jpg"])
            #expect(requests(origin, "small.jpg").count == 2)
        }
    }

    @Test func refreshRevalidatesAFreshEntryOnce() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.url("/cache/small.jpg?cc=max-age%3D3600")
            _ = try await load(url, directory)
            let refreshed = try await load(url, directory, options: .refreshCached)
            #expect(refreshed.isRevalidated)
            #expect(try await load(url, directory).source == .disk)
            #expect(requests(origin, "small.jpg").count == 2)
        }
    }

    @Test func expiresHeadersAndTheDefaultAge() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let past = origin.url("/cache/small.jpg?expires=-60")
            _ = try await load(past, directory)
            #expect(try await load(past, directory).isRevalidated)
            #expect(requests(origin, "small.jpg").count == 2)

            // No freshness information: fresh for the policy's default age (scaled, like every
            // bound the tests set: under Thread Sanitizer two loads took more than a second).
            let silent = origin.url("/cache/logo.png")
            // Three seconds: a loaded machine (a full run beside builds) took over a second for two loads.
            let age = HTTPCachePolicy(defaultMaxAge: TestTime.scaled(.seconds(3)))
            _ = try await load(silent, directory, policy: age)
            #expect(try await load(silent, directory, policy: age).source == .disk)
            try await Task.sleep(for: TestTime.scaled(.seconds(3)) + .milliseconds(100))
            #expect(try await load(silent, directory, policy: age).isRevalidated)
            #expect(requests(origin, "logo.png").count == 2)
        }
    }

    @Test func staleIfErrorServesTheStaleEntryWhenTheOriginIsDown() async throws {
        let directory = temporaryDirectory()
        var url: URL?
        try await withOrigin { origin in
            url = origin.url("/cache/small.jpg?cc=max-age%3D0")
            _ = try await load(url!, directory)
        }
        // The origin is stopped: the connection is refused.
        let stale = try await load(url!, directory)
        #expect(stale.isStale && stale.source == .disk)
        #expect(stale.data == SampleFiles.standard["small.jpg"])
        // Switched off, the failure comes through.
        await #expect(throws: ImagePipelineError.self) {
            _ = try await load(url!, directory, policy: HTTPCachePolicy(staleIfError: false))
        }
    }

    @Test func mustRevalidateForbidsStaleIfErrorWhenTheOriginAnswers500() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            // Both stale at once (max-age=0); the origin then fails every request for both.
            let strict = origin.url("/cache/small.jpg?cc=max-age%3D0%2C%20must-revalidate")
            let lenient = origin.url("/cache/logo.png?cc=max-age%3D0")
            _ = try await load(strict, directory)
            _ = try await load(lenient, directory)
            #expect(try DiskCache(directory: directory).entry(for: strict.absoluteString)?.metadata.mustRevalidate == true)
            for name in ["small.jpg", "logo.png"] {
                let fail = origin.url("/cache-admin/fail/\(name)?status=500").absoluteString
                #expect(try await HTTPClient.shared.execute(HTTPClientRequest(url: fail), timeout: .seconds(10)).status == .ok)
            }
            // must-revalidate: the 500 comes through, and the entry is not served.
            do {
                let served = try await load(strict, directory)
                Issue.record("a must-revalidate entry was served stale: \(served.source), stale \(served.isStale)")
            } catch {
                guard case .loadingFailed(.badStatusCode(500)) = error as? ImagePipelineError else { Issue.record("\(error)"); return }
            }
            // Without it, stale-if-error still serves the stale copy.
            let stale = try await load(lenient, directory)
            #expect(stale.isStale && stale.source == .disk && stale.data == SampleFiles.standard["logo.png"])
            #expect(requests(origin, "small.jpg").count == 2 && requests(origin, "logo.png").count == 2)
        }
    }

    @Test func negativeCachingRemembers404ButNot5xx() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try pipeline(directory, policy: HTTPCachePolicy(negativeTTL: .seconds(30)))
            let missing = ImageRequest(url: origin.url("/cache/nothing.jpg"))
            for _ in 0..<5 { await #expect(throws: ImagePipelineError.loadingFailed(.badStatusCode(404))) { _ = try await pipeline.data(for: missing) } }
            #expect(requests(origin, "nothing.jpg").count == 1)
            let failing = ImageRequest(url: origin.imageURL("small.jpg", query: "status=500"))
            for _ in 0..<3 { await #expect(throws: ImagePipelineError.self) { _ = try await pipeline.data(for: failing) } }
            #expect(origin.requests.filter { $0.query == "status=500" }.count == 3)
        }
    }
}
