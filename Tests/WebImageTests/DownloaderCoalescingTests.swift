import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Downloader coalescing, tokens and progress")
struct DownloaderCoalescingTests {
    @Test(arguments: LoaderKind.allCases)
    func callersOfOneURLShareOneRequest(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let url = origin.imageURL("photo.jpg", query: "delay=200")
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await downloader.download(url).data.count } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes == Array(repeating: SampleFiles.standard["photo.jpg"]!.count, count: 20))
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cancellingOneTokenEndsOnlyThatCaller(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let request = ImageDownloadRequest(url: origin.imageURL("photo.jpg", query: "delay=300"))
            let cancelled = downloader.downloadToken(request)
            let kept = downloader.downloadToken(request)
            try await Task.sleep(for: .milliseconds(50))
            cancelled.cancel()
            let error = await downloadError { _ = try await cancelled.result }
            #expect(error?.isCancelled == true)
            #expect(try await kept.result.data == SampleFiles.standard["photo.jpg"])
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cancellingTheLastTokenDropsTheConnection(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let request = ImageDownloadRequest(url: origin.url("/big?size=4000000&chunk=20000&stall=20"))
            let tokens = (0..<3).map { _ in downloader.downloadToken(request) }
            #expect(await eventually { origin.bytesSent(path: "/big") > 0 })
            for token in tokens { token.cancel() }
            for token in tokens { #expect(await downloadError { _ = try await token.result }?.isCancelled == true) }
            #expect(await eventually { origin.abortedBodies(path: "/big") == 1 })
            #expect(origin.bytesSent(path: "/big") < 4_000_000)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func sharedDownloadRunsAtItsHighestCallersPriority(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxConcurrentDownloads = 1 }
            let blocker = Task { try await downloader.download(origin.imageURL("landscape.jpg", query: "delay=1000")) }
            #expect(await eventually { downloader.activeDownloads == 1 })
            let shared = origin.imageURL("thumb-1.jpg")
            let low = Task { try await downloader.download(shared, priority: .veryLow) }
            #expect(await eventually { downloader.queuedDownloads == 1 })
            let normal = Task { try await downloader.download(origin.imageURL("thumb-2.jpg"), priority: .normal) }
            #expect(await eventually { downloader.queuedDownloads == 2 })
            let urgent = Task { try await downloader.download(shared, priority: .veryHigh) }
            try await Task.sleep(for: .milliseconds(50))
            for task in [blocker, low, normal, urgent] { _ = try await task.value }
            let order = origin.requests.map(\.path).filter { $0 != "/images/landscape.jpg" }
            #expect(order == ["/images/thumb-1.jpg", "/images/thumb-2.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func progressIsMonotonicAndEndsAtTheBodySize(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let size = SampleFiles.standard["photo.jpg"]!.count
            let reports = Recorder<DownloadProgress>()
            var request = ImageDownloadRequest(url: origin.imageURL("photo.jpg", query: "chunk=8192&stall=2"))
            request.wantsPartialData = true
            let result = try await downloader.download(request) { reports.append($0) }
            let received = reports.all.map(\.received)
            #expect(received.count > 3)
            #expect(received == received.sorted())
            #expect(Set(received).count == received.count)
            #expect(received.last == size && result.data.count == size)
            #expect(reports.all.allSatisfy { $0.expected == size })
            #expect(reports.all.allSatisfy { $0.partialData?.count == $0.received })
            #expect(reports.all.last?.partialData == SampleFiles.standard["photo.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func progressIntervalThrottlesButTheLastReportAlwaysComes(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let reports = Recorder<DownloadProgress>()
            let request = ImageDownloadRequest(url: origin.imageURL("photo.jpg", query: "chunk=8192&stall=2"), progressInterval: .seconds(60))
            _ = try await downloader.download(request) { reports.append($0) }
            #expect(reports.all.count <= 2)
            #expect(reports.all.last?.received == SampleFiles.standard["photo.jpg"]!.count)
            #expect(reports.all.allSatisfy { $0.partialData == nil })
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func completionHandlerFormDeliversOnce(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let results = Recorder<Int>()
            let done = AsyncStream<Void>.makeStream()
            downloader.download(ImageDownloadRequest(url: origin.imageURL("small.jpg"))) { result in
                results.append((try? result.get().data.count) ?? -1)
                done.continuation.finish()
            }
            for await _ in done.stream {}
            #expect(results.all == [SampleFiles.standard["small.jpg"]!.count])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func eventsDescribeEachDownload(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let events = downloader.events()
            _ = try await downloader.download(origin.imageURL("small.jpg"))
            _ = await downloadError { _ = try await downloader.download(origin.imageURL("missing.jpg")) }
            var names: [String] = []
            for await event in events {
                switch event {
                case .started: names.append("started")
                case .responseReceived(_, let response): names.append("response \(response.statusCode)")
                case .progress: if names.last != "progress" { names.append("progress") }
                case .finished: names.append("finished")
                case .failed(_, let error): names.append("failed \(error)")
                case .cancelled: names.append("cancelled")
                }
                if names.last?.hasPrefix("failed") == true { break }
            }
            #expect(names == ["started", "response 200", "progress", "finished", "started", "response 404", "failed bad HTTP status 404"])
        }
    }
}
