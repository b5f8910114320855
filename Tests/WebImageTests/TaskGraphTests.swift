import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Task graph: sharing, priority and cancellation at every stage")
struct TaskGraphTests {
    @Test func tenRequestsThreeProcessorsMakeOneDownloadOneDecodeThreeProcessings() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("photo.jpg", query: "delay=300")
            let processors: [[any ImageProcessing]] = [[KeepLeft(fraction: 0.5)], [KeepLeft(fraction: 0.25)], [KeepLeft(fraction: 0.1)]]
            let responses = try await withThrowingTaskGroup(of: ImageResponse.self) { group in
                for n in 0..<10 {
                    group.addTask { try await pipeline.image(for: ImageRequest(url: url).processed(by: processors[n % 3])) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 10)
            #expect(Set(responses.map(\.image.pixelWidth)) == [500, 250, 100])
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)
            let stats = pipeline.statistics
            #expect(stats.downloads == 1)
            #expect(stats.decodes == 1)
            #expect(stats.processings == 3)
            #expect(stats.dataJobs == 1 && stats.decodeJobs == 1 && stats.imageJobs == 3)
        }
    }

    @Test func tenThousandCallersOfOneURLShareOneRequestAndOneDecode() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil, memory: nil)
            let url = origin.imageURL("small.jpg", query: "delay=500")
            let widths = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10_000 { group.addTask { try await pipeline.image(for: url).image.pixelWidth } }
                return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
            }
            #expect(widths == [120])
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)
            #expect(pipeline.statistics.decodes == 1)
        }
    }

    @Test func mostCallersLeavingAJobLeaveTheRestServedByTheOneDownload() async throws {
        // 300 callers of one held image; 250 of them leave while it is held (the job drops their
        // places as they go), the other 50 get the image from the one request.
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil, memory: nil)
            let url = origin.imageURL("small.jpg", query: "delay=1500")
            let callers = (0..<300).map { _ in Task { try await pipeline.image(for: url) } }
            #expect(await eventually { origin.requestCount(path: "/images/small.jpg") == 1 })
            for caller in callers.prefix(250) { caller.cancel() }
            for caller in callers.prefix(250) {
                await #expect(throws: ImagePipelineError.cancelled) { _ = try await caller.value }
            }
            for caller in callers.suffix(50) {
                let response = try await caller.value
                #expect(response.image.pixelWidth == 120)
                #expect(response.source == .network && response.request.url == url)
            }
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)
            #expect(pipeline.statistics.decodes == 1)
        }
    }

    @Test func cancellingOneSubscriberLeavesTheOthersAndTheLastCancelsTheDownload() async throws {
        try await withOrigin { origin in
            // 60 s per attempt: a full run on 2 loaded cores once stretched the stalled body past
            // the default 15 s; what is tested is who cancels, not how fast.
            let pipeline = try makeTestPipeline(cacheDirectory: nil) { $0.timeout = TestTime.scaled(.seconds(60)) }
            let url = origin.imageURL("photo.jpg", query: "chunk=4096&stall=40")
            let a = pipeline.imageTask(with: ImageRequest(url: url))
            let b = pipeline.imageTask(with: ImageRequest(url: url).processed(by: [KeepLeft(fraction: 0.5)]))
            #expect(await eventually { origin.requestCount(path: "/images/photo.jpg") == 1 })
            a.cancel()
            await #expect(throws: ImagePipelineError.cancelled) { _ = try await a.response }
            let survived = try await b.response
            #expect(survived.image.pixelWidth == 500)
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)

            // Now both leave: the download itself stops (the origin sees the connection drop).
            // Slow enough (about 7 s) that a loaded machine still cancels it mid-body.
            let slow = origin.imageURL("landscape.jpg", query: "chunk=4096&stall=200")
            let c = pipeline.imageTask(with: ImageRequest(url: slow))
            let d = pipeline.imageTask(with: ImageRequest(url: slow).thumbnail(maxPixelSize: 64))
            #expect(await eventually { origin.bytesSent(path: "/images/landscape.jpg") > 0 })
            c.cancel()
            d.cancel()
            await #expect(throws: ImagePipelineError.cancelled) { _ = try await d.response }
            #expect(await eventually { origin.abortedBodies(path: "/images/landscape.jpg") == 1 })
        }
    }

    /// A pipeline with one download slot and a suspended download queue, and two tasks waiting
    /// in it: thumb-1 at low priority, thumb-2 at normal. Resuming the queue lets them go.
    func queuedTwo(_ origin: ImageOrigin) async throws -> (ImagePipeline, low: ImageTask, normal: ImageTask) {
        let pipeline = try makeTestPipeline(cacheDirectory: nil) { $0.maxConcurrentDownloads = 1 }
        let downloader = pipeline.configuration.downloader
        downloader.suspend()
        let low = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-1.jpg"), priority: .low))
        #expect(await eventually { downloader.queuedDownloads(at: .low) == 1 })
        let normal = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-2.jpg"), priority: .normal))
        #expect(await eventually { downloader.queuedDownloads(at: .normal) == 1 })
        return (pipeline, low, normal)
    }

    /// Which of the two queued downloads the origin sees first shows the priority the shared work
    /// waits at.
    func arrivalOrder(
        lift: RequestPriority?, leave: Bool, origin: ImageOrigin
    ) async throws -> [String] {
        let (pipeline, low, normal) = try await queuedTwo(origin)
        let downloader = pipeline.configuration.downloader
        var joiner: ImageTask?
        if let lift {
            // A second caller of thumb-1 (another variant: it joins below the image stage).
            joiner = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-1.jpg"), priority: lift).processed(by: [KeepLeft(fraction: 0.5)]))
            #expect(await eventually { downloader.queuedDownloads(at: lift) == 1 })
            if leave {
                joiner?.cancel()
                #expect(await eventually { downloader.queuedDownloads(at: .low) == 1 })
            }
        }
        downloader.resume()
        _ = try await low.response
        _ = try await normal.response
        if let joiner, !leave { _ = try await joiner.response }
        return origin.requests.map { String($0.path.split(separator: "/").last ?? "") }
    }

    @Test func aJoiningSubscriberLiftsTheSharedDownload() async throws {
        try await withOrigin { origin in
            let order = try await arrivalOrder(lift: .veryHigh, leave: false, origin: origin)
            #expect(order == ["thumb-1.jpg", "thumb-2.jpg"])
        }
    }

    @Test func aLeavingSubscriberLowersItAgain() async throws {
        try await withOrigin { origin in
            let order = try await arrivalOrder(lift: .veryHigh, leave: true, origin: origin)
            #expect(order == ["thumb-2.jpg", "thumb-1.jpg"])
        }
    }

    @Test func withoutAJoinerTheOrderFollowsPriority() async throws {
        try await withOrigin { origin in
            let order = try await arrivalOrder(lift: nil, leave: false, origin: origin)
            #expect(order == ["thumb-2.jpg", "thumb-1.jpg"])
        }
    }

    @Test func changingATaskPriorityWhileQueuedReordersTheQueue() async throws {
        try await withOrigin { origin in
            let (pipeline, low, normal) = try await queuedTwo(origin)
            let downloader = pipeline.configuration.downloader
            low.priority = .veryHigh
            #expect(low.priority == .veryHigh)
            #expect(await eventually { downloader.queuedDownloads(at: .veryHigh) == 1 })
            downloader.resume()
            for task in [low, normal] { _ = try await task.response }
            let order = origin.requests.map { String($0.path.split(separator: "/").last ?? "") }
            #expect(order == ["thumb-1.jpg", "thumb-2.jpg"])
        }
    }

    @Test func aPrioritySetRightAfterImageTaskIsHonoured() async throws {
        try await withOrigin { origin in
            let (pipeline, low, normal) = try await queuedTwo(origin)
            let downloader = pipeline.configuration.downloader
            // The README's sequence: no await between making the task and setting its priority.
            let task = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-3.jpg")))
            task.priority = .veryHigh
            #expect(task.priority == .veryHigh)
            #expect(await eventually { downloader.queuedDownloads(at: .veryHigh) == 1 })
            #expect(downloader.queuedDownloads(at: .normal) == 1)  // thumb-2 only
            downloader.resume()
            let image = try await task.response.image
            #expect(image.pixelWidth == 184)
            for other in [low, normal] { _ = try await other.response }
            let order = origin.requests.map { String($0.path.split(separator: "/").last ?? "") }
            #expect(order == ["thumb-3.jpg", "thumb-2.jpg", "thumb-1.jpg"])
        }
    }
}
