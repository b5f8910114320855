import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Two-stage loading: look up the real URL, then download")
struct TwoStageLoadingTests {
    static let lookupResolver = LookupResolver { $0.path.hasPrefix("/lookup/") }

    @Test(arguments: LoaderKind.allCases)
    func lookupThenImageUnderTheOriginalIdentity(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.resolvers = [Self.lookupResolver] }
            let result = try await downloader.download(origin.url("/lookup/photo.jpg"))
            #expect(result.data == SampleFiles.standard["photo.jpg"])
            #expect(origin.requests.map(\.path) == ["/lookup/photo.jpg", "/images/photo.jpg"])

            let pipeline = ImagePipeline(configuration: .init(downloader: downloader))
            let url = origin.url("/lookup/logo.png")
            let response = try await pipeline.image(for: url)
            #expect(response.image.format == .png)
            #expect(pipeline.cachedImage(for: url) != nil)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func lookupAnswersAreReusedWhileTheirHeadersAllow(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.resolvers = [Self.lookupResolver] }
            for _ in 0..<3 { _ = try await downloader.download(origin.url("/lookup/small.jpg?maxAge=60")) }
            #expect(origin.requestCount(path: "/lookup/small.jpg") == 1)
            #expect(origin.requestCount(path: "/images/small.jpg") == 3)

            for _ in 0..<2 { _ = try await downloader.download(origin.url("/lookup/logo.png")) }  // no-store
            #expect(origin.requestCount(path: "/lookup/logo.png") == 2)
        }
    }

    @Test func customParserReadsAHeader() async throws {
        try await withOrigin { origin in
            let resolver = LookupResolver(claims: { $0.path.hasPrefix("/lookup/") }) { response, _, _ in
                response.value(forHeader: "X-Image-URL").flatMap { URL(string: $0, relativeTo: response.url) }
            }
            let downloader = LoaderKind.asyncHTTPClient.downloader { $0.resolvers = [resolver] }
            let downloaded = try await downloader.download(origin.url("/lookup/small.jpg?via=header"))
            #expect(downloaded.data == SampleFiles.standard["small.jpg"])
        }
    }

    @Test func lookupFailuresSayWhichStageFailed() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader {
                $0.resolvers = [LookupResolver { $0.path.hasPrefix("/text") || $0.path.hasPrefix("/status/") }]
            }
            guard case .resolverFailed? = await downloadError({ _ = try await downloader.download(origin.url("/text")) }) else {
                Issue.record("expected a resolver failure for a body that is not a URL")
                return
            }
            let failed = await downloadError({ _ = try await downloader.download(origin.url("/status/500")) })
            #expect(failed == .lookupFailed(.badStatusCode(500)), "\(String(describing: failed))")
        }
    }

    @Test func lookupsRunAtLowPriorityAndImagesOutrankThem() async throws {
        try await withOrigin { origin in
            let (downloader, blocker) = await Self.oneSlotDownloaderBusy(origin)
            var tasks: [Task<DownloadResult, any Error>] = []
            for (index, path) in ["/lookup/thumb-1.jpg", "/lookup/thumb-2.jpg", "/images/small.jpg"].enumerated() {
                tasks.append(Task { try await downloader.download(origin.url(path)) })
                #expect(await eventually { downloader.queuedDownloads == index + 1 })
            }
            _ = try await blocker.value
            for task in tasks { _ = try await task.value }
            let order = origin.requests.map(\.path).dropFirst()
            // The plain image first (look-ups never starve images); then each look-up is followed
            // by its own image, which outranks the other waiting look-up.
            #expect(Array(order) == ["/images/small.jpg", "/lookup/thumb-1.jpg", "/images/thumb-1.jpg", "/lookup/thumb-2.jpg", "/images/thumb-2.jpg"])
        }
    }

    @Test func priorityChangesDoNotLiftAQueuedLookup() async throws {
        try await withOrigin { origin in
            let (downloader, blocker) = await Self.oneSlotDownloaderBusy(origin)
            let lookup = downloader.downloadToken(ImageDownloadRequest(url: origin.url("/lookup/thumb-1.jpg")))
            #expect(await eventually { downloader.queuedDownloads == 1 })
            // A caller's priority event (here a no-op) must not move the look-up off low priority.
            await lookup.setPriority(.normal)
            let image = Task { try await downloader.download(origin.url("/images/small.jpg")) }
            #expect(await eventually { downloader.queuedDownloads == 2 })
            _ = try await blocker.value
            _ = try await lookup.result
            _ = try await image.value
            let order = origin.requests.map(\.path).dropFirst()
            #expect(Array(order) == ["/images/small.jpg", "/lookup/thumb-1.jpg", "/images/thumb-1.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cancellingTheCallerCancelsTheLookup(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.resolvers = [Self.lookupResolver] }
            // The look-up answers after 10 s; the cancellation must end the caller long before
            // (the bound leaves room for a fully loaded test run).
            let token = downloader.downloadToken(ImageDownloadRequest(url: origin.url("/lookup/photo.jpg?delay=10000")))
            #expect(await eventually { origin.requestCount(path: "/lookup/photo.jpg") == 1 })
            let started = ContinuousClock.now
            token.cancel()
            #expect(await downloadError { _ = try await token.result }?.isCancelled == true)
            #expect(ContinuousClock.now - started < .seconds(7))
            try await Task.sleep(for: .milliseconds(100))
            #expect(origin.requestCount(path: "/images/photo.jpg") == 0)
        }
    }

    /// A downloader with one slot and the look-up resolver, its slot taken for a second by a
    /// slow image, so that what is queued next waits.
    static func oneSlotDownloaderBusy(_ origin: ImageOrigin) async -> (ImageDownloader, Task<DownloadResult, any Error>) {
        let downloader = LoaderKind.asyncHTTPClient.downloader {
            $0.maxConcurrentDownloads = 1
            $0.resolvers = [Self.lookupResolver]
        }
        let blocker = Task { try await downloader.download(origin.imageURL("landscape.jpg", query: "delay=1000")) }
        #expect(await eventually { downloader.activeDownloads == 1 })
        return (downloader, blocker)
    }
}
