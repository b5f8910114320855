import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Downloader queue: limit, order, priority")
struct DownloaderQueueTests {
    @Test(arguments: LoaderKind.allCases)
    func concurrencyLimitIsNeverExceeded(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 3 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...12 {
                    group.addTask { _ = try await downloader.download(origin.imageURL("thumb-\(n).jpg", query: "delay=300")) }
                }
                try await group.waitForAll()
            }
            #expect(origin.maxConcurrentRequests == 3)
            #expect(origin.totalRequests == 12)
        }
    }

    /// Starts a blocker, then queues `names` one by one (each visibly queued before the next).
    func queue(
        _ names: [(String, RequestPriority)], on downloader: ImageDownloader, origin: ImageOrigin
    ) async throws -> [Task<DownloadResult, any Error>] {
        var tasks: [Task<DownloadResult, any Error>] = [Task { try await downloader.download(origin.imageURL("landscape.jpg", query: "delay=1000")) }]
        #expect(await eventually { downloader.activeDownloads == 1 })
        for (index, (name, priority)) in names.enumerated() {
            tasks.append(Task { try await downloader.download(origin.imageURL(name), priority: priority) })
            #expect(await eventually { downloader.queuedDownloads == index + 1 })
        }
        for task in tasks { _ = try await task.value }
        return tasks
    }

    func arrivalOrder(_ origin: ImageOrigin) -> [String] {
        origin.requests.map { String($0.path.split(separator: "/").last ?? "") }.filter { $0 != "landscape.jpg" }
    }

    @Test(arguments: LoaderKind.allCases)
    func fifoStartsOldestFirst(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1 }
            _ = try await queue([("thumb-1.jpg", .normal), ("thumb-2.jpg", .normal), ("thumb-3.jpg", .normal)], on: downloader, origin: origin)
            #expect(arrivalOrder(origin) == ["thumb-1.jpg", "thumb-2.jpg", "thumb-3.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func lifoStartsNewestFirst(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1; $0.executionOrder = .lifo }
            _ = try await queue([("thumb-1.jpg", .normal), ("thumb-2.jpg", .normal), ("thumb-3.jpg", .normal)], on: downloader, origin: origin)
            #expect(arrivalOrder(origin) == ["thumb-3.jpg", "thumb-2.jpg", "thumb-1.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func higherPriorityQueuedLaterStartsFirst(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1 }
            _ = try await queue([("thumb-1.jpg", .low), ("thumb-2.jpg", .normal), ("thumb-3.jpg", .veryHigh)], on: downloader, origin: origin)
            #expect(arrivalOrder(origin) == ["thumb-3.jpg", "thumb-2.jpg", "thumb-1.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func priorityCanChangeWhileQueued(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1 }
            let blocker = Task { try await downloader.download(origin.imageURL("landscape.jpg", query: "delay=1000")) }
            #expect(await eventually { downloader.activeDownloads == 1 })
            let low = downloader.downloadToken(ImageDownloadRequest(url: origin.imageURL("thumb-1.jpg"), priority: .low))
            #expect(await eventually { downloader.queuedDownloads == 1 })
            let normal = downloader.downloadToken(ImageDownloadRequest(url: origin.imageURL("thumb-2.jpg")))
            #expect(await eventually { downloader.queuedDownloads == 2 })
            await low.setPriority(.veryHigh)
            _ = try await blocker.value
            _ = try await low.result
            _ = try await normal.result
            #expect(arrivalOrder(origin) == ["thumb-1.jpg", "thumb-2.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func suspendHoldsQueuedDownloadsAndResumeReleasesThem(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            downloader.suspend()
            let task = Task { try await downloader.download(origin.imageURL("small.jpg")) }
            #expect(await eventually { downloader.queuedDownloads == 1 })
            try await Task.sleep(for: .milliseconds(100))
            #expect(origin.totalRequests == 0)
            downloader.resume()
            #expect(try await task.value.data == SampleFiles.standard["small.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func limitChangesWhileRunning(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1 }
            let tasks = (1...6).map { n in Task { try await downloader.download(origin.imageURL("thumb-\(n).jpg", query: "delay=1000")) } }
            #expect(await eventually { downloader.queuedDownloads == 5 })
            downloader.setMaxConcurrentDownloads(3)
            #expect(downloader.maxConcurrentDownloads == 3)
            #expect(await eventually { downloader.activeDownloads == 3 })
            for task in tasks { _ = try await task.value }
            #expect(origin.maxConcurrentRequests == 3)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cancelAllEndsEveryCaller(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1 }
            let tasks = (1...4).map { n in Task { try await downloader.download(origin.imageURL("thumb-\(n).jpg", query: "delay=500")) } }
            #expect(await eventually { downloader.queuedDownloads == 3 })
            downloader.cancelAll()
            for task in tasks {
                await #expect(throws: ImageDownloadError.cancelled) { _ = try await task.value }
            }
        }
    }

    /// One loader only: no request reaches it (the downloader is suspended and every caller is
    /// cancelled), and the 20,000 callers keep both cooperative threads busy for seconds —
    /// run once per loader, the full suite's other network tests starved past their timeouts.
    @Test func cancelledCallersLeaveNothingQueued() async {
        let loader = LoaderKind.asyncHTTPClient
        // Each caller creates a download and is cancelled at a slightly different moment, some
        // between the registry creating the download and the queue receiving its work: either
        // the queue sees the cancellation or the cancellation withdraws the work.
        let downloader = loader.downloader()
        downloader.suspend()
        var cancelled = 0
        for n in 0..<20_000 {
            let caller = Task { try await downloader.download(URL(string: "http://127.0.0.1:9/z\(n).jpg")!) }
            for _ in 0..<(n % 64) { _ = ContinuousClock.now }
            caller.cancel()
            if await downloadError({ _ = try await caller.value }) == .cancelled { cancelled += 1 }
        }
        #expect(cancelled == 20_000)
        #expect(downloader.queuedDownloads == 0)
        #expect(downloader.activeDownloads == 0)
        downloader.resume()
    }

    @Test(arguments: LoaderKind.allCases)
    func aRetryKeepsAJoinersHigherPriority(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader {
                $0.maxConcurrentDownloads = 1
                $0.retryPolicy = RetryPolicy(maxRetries: 1, baseDelay: .milliseconds(50))
            }
            let flaky = origin.url("/flaky/thumb-1.jpg?fails=1&failStatus=503")
            let blocker = Task { try await downloader.download(origin.imageURL("landscape.jpg", query: "delay=800")) }
            #expect(await eventually { downloader.activeDownloads == 1 })
            let creator = Task { try await downloader.download(flaky, priority: .low) }
            #expect(await eventually { downloader.queuedDownloads == 1 })
            let second = Task { try await downloader.download(origin.imageURL("thumb-2.jpg", query: "delay=400")) }
            #expect(await eventually { downloader.queuedDownloads == 2 })
            let third = Task { try await downloader.download(origin.imageURL("thumb-3.jpg")) }
            #expect(await eventually { downloader.queuedDownloads == 3 })
            let joiner = Task { try await downloader.download(flaky, priority: .veryHigh) }
            for task in [blocker, creator, second, third, joiner] { _ = try await task.value }
            let order = origin.requests.map { String($0.path.split(separator: "/").last ?? "") }.filter { $0 != "landscape.jpg" }
            // The 503's retry waits at the joiner's priority, ahead of the normal thumb-3.
            #expect(order == ["thumb-1.jpg", "thumb-2.jpg", "thumb-1.jpg", "thumb-3.jpg"])
        }
    }
}
