import Dispatch
import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("ImageTask: previews, events, failed URLs, refresh, callbacks")
struct ImageTaskTests {
    @Test func previewsOfAProgressiveJPEGArriveBeforeTheFinalImage() async throws {
        try await withOrigin { origin in
            let source = SampleImages.pattern(width: 800, height: 600, seed: 21)
            origin.setImage(try JPEGCoder(progressive: true).encode(source, as: .jpeg, quality: 0.9), named: "progressive.jpg")
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            var request = ImageRequest(url: origin.imageURL("progressive.jpg", query: "chunk=4096&stall=40"), options: .progressiveLoad)
            request.context.previewInterval = .milliseconds(30)
            let task = pipeline.imageTask(with: request)
            var kinds: [String] = []
            for await event in task.events {
                switch event {
                case .started: kinds.append("started")
                case .progress: if kinds.last != "progress" { kinds.append("progress") }
                case .preview(let preview):
                    #expect(preview.pixelWidth == 800 && preview.pixelHeight == 600)
                    kinds.append("preview")
                case .response(_, let isFinal): kinds.append(isFinal ? "final" : "cached")
                case .finished: kinds.append("finished")
                }
            }
            #expect(kinds.first == "started")
            #expect(kinds.suffix(2) == ["final", "finished"])
            let previews = kinds.filter { $0 == "preview" }.count
            #expect(previews >= 2, "kinds: \(kinds)")
            #expect((kinds.firstIndex(of: "preview") ?? .max) < (kinds.firstIndex(of: "final") ?? .min))
            let response = try await task.response
            #expect(response.image.pixelWidth == 800)
            // Previews are never cached: the memory cache holds the final image only.
            #expect(pipeline.cachedImage(for: request)?.pixels == response.image.pixels)
        }
    }

    @Test func progressReachesTheTaskAndEndsAtTheBodySize() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let task = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("photo.jpg", query: "chunk=16384&stall=5")))
            var received: [Int] = []
            for await progress in task.progress { received.append(progress.received) }
            #expect(received == received.sorted())
            #expect(received.last == SampleFiles.standard["photo.jpg"]!.count)
            _ = try await task.response
        }
    }

    @Test func permanentFailuresAreRememberedUntilTheTTLOrRetryFailed() async throws {
        try await withOrigin { origin in
            // A long TTL here (a loaded machine can take seconds between two calls); the expiry is
            // shown below with a second pipeline and a short one.
            let pipeline = try makeTestPipeline(cacheDirectory: nil, failedURLTimeToLive: .seconds(120))
            let missing = ImageRequest(url: origin.imageURL("missing.jpg"))
            for _ in 0..<3 {
                await #expect(throws: ImagePipelineError.loadingFailed(.badStatusCode(404))) { _ = try await pipeline.image(for: missing) }
            }
            #expect(origin.requestCount(path: "/images/missing.jpg") == 1)
            await #expect(throws: ImagePipelineError.loadingFailed(.badStatusCode(404))) {
                _ = try await pipeline.image(for: missing.options(.retryFailed))
            }
            #expect(origin.requestCount(path: "/images/missing.jpg") == 2)
            // 1.5 s: a full run on 2 loaded cores once took more than 300 ms between the failure
            // and the look-up below.
            let shortLived = try makeTestPipeline(cacheDirectory: nil, failedURLTimeToLive: TestTime.scaled(.milliseconds(1500)))
            await #expect(throws: ImagePipelineError.loadingFailed(.badStatusCode(404))) { _ = try await shortLived.image(for: missing) }
            #expect(shortLived.failedURLs.error(for: missing.dataKey) != nil)
            try await Task.sleep(for: TestTime.scaled(.milliseconds(1700)))
            #expect(shortLived.failedURLs.error(for: missing.dataKey) == nil)
            await #expect(throws: ImagePipelineError.loadingFailed(.badStatusCode(404))) { _ = try await shortLived.image(for: missing) }
            #expect(origin.requestCount(path: "/images/missing.jpg") == 4)

            // Undecodable data is permanent too; a 5xx is not.
            let corrupt = ImageRequest(url: origin.imageURL("photo.jpg", query: "corrupt=1"))
            for _ in 0..<2 { await #expect(throws: ImagePipelineError.self) { _ = try await pipeline.image(for: corrupt) } }
            #expect(origin.requests.filter { $0.query == "corrupt=1" }.count == 1)
            let unavailable = ImageRequest(url: origin.imageURL("photo.jpg", query: "status=503"))
            for _ in 0..<2 { await #expect(throws: ImagePipelineError.self) { _ = try await pipeline.image(for: unavailable) } }
            #expect(origin.requests.filter { $0.query == "status=503" }.count == 2)
            // Once the URL works again, retryFailed clears it.
            origin.setImage(SampleFiles.standard["small.jpg"]!, named: "missing.jpg")
            #expect(try await pipeline.image(for: missing.options(.retryFailed)).source == .network)
            #expect(pipeline.failedURLs.error(for: missing.dataKey) == nil)
        }
    }

    @Test func refreshCachedDeliversTwiceOnlyWhenTheImageChanged() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("small.jpg")
            let first = try await pipeline.image(for: ImageRequest(url: url, options: .waitStoreCache))
            let refresh = ImageRequest(url: url, options: [.refreshCached, .waitStoreCache])

            // Unchanged: the cached image, then a 304 and no second delivery.
            let unchanged = try await deliveries(pipeline.imageTask(with: refresh))
            #expect(unchanged.count == 1)
            #expect(unchanged.first?.source == .memory)
            #expect(origin.requests.last?.headers["if-none-match"] != nil)
            #expect(origin.requestCount(path: "/images/small.jpg") == 2)

            // Changed: the cached image, then the new one.
            origin.setImage(SampleFiles.standard["thumb-1.jpg"]!, named: "small.jpg")
            let changed = try await deliveries(pipeline.imageTask(with: refresh))
            #expect(changed.count == 2)
            #expect(changed[0].image.pixels == first.image.pixels)
            #expect(changed[1].source == .network && changed[1].image.pixelWidth == 168)
            #expect(try await pipeline.image(for: url).image.pixelWidth == 168)
        }
    }

    /// The responses a task delivers, in order.
    func deliveries(_ task: ImageTask) async throws -> [ImageResponse] {
        var responses: [ImageResponse] = []  // a refreshed image that did not change is delivered once
        for await event in task.events { if case .response(let response, _) = event { responses.append(response) } }
        let final = try await task.response
        #expect(responses.last?.image.pixels == final.image.pixels)
        return responses
    }

    @Test func completionHandlersRunOnTheChosenQueueInOrder() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let queue = DispatchQueue(label: "callbacks")
            let key = DispatchSpecificKey<Int>()
            queue.setSpecific(key: key, value: 7)
            let log = Locked<[String]>([])
            let result: Result<ImageResponse, ImagePipelineError> = await withCheckedContinuation { done in
                pipeline.loadImage(
                    with: ImageRequest(url: origin.imageURL("photo.jpg", query: "chunk=32768&stall=5")), on: .queue(queue),
                    progress: { _ in log.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 7 ? "progress" : "wrong") } },
                    completion: { result in
                        log.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 7 ? "done" : "wrong") }
                        done.resume(returning: result)
                    })
            }
            #expect(try result.get().image.pixelWidth == 1000)
            let entries = log.withLock { $0 }
            #expect(!entries.contains("wrong"))
            #expect(entries.last == "done" && entries.filter { $0 == "done" }.count == 1)
            #expect(entries.contains("progress"))
        }
    }

    actor Collector {
        var results: [Int] = []
        func add(_ value: Int) { results.append(value) }
    }

    @Test func completionHandlersCanRunOnAnActorAndCancellationIsReported() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let collector = Collector()
            let width: Int = try await withCheckedThrowingContinuation { done in
                pipeline.loadImage(with: ImageRequest(url: origin.imageURL("small.jpg")), on: .actor(collector)) { result in
                    collector.assertIsolated()
                    done.resume(with: result.map(\.image.pixelWidth).mapError { $0 as any Error })
                }
            }
            #expect(width == 120)
            let cancelled: Result<ImageResponse, ImagePipelineError> = await withCheckedContinuation { done in
                let task = pipeline.loadImage(with: ImageRequest(url: origin.imageURL("landscape.jpg", query: "delay=2000"))) { done.resume(returning: $0) }
                task.cancel()
            }
            #expect(throws: ImagePipelineError.cancelled) { _ = try cancelled.get() }
        }
    }
}
