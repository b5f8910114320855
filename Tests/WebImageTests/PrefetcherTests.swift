import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("ImagePrefetcher: counts, concurrency, destinations, joining, stopping")
struct PrefetcherTests {
    /// Every event until the batch ends (nil if it does not end within `timeout`).
    func untilAllDone(
        _ events: AsyncStream<ImagePrefetcher.Event>, timeout: Duration = TestTime.scaled(.seconds(30))
    ) async -> (finished: [(URL, Result<ImageSource, ImagePipelineError>)], counts: ImagePrefetcher.Counts)? {
        await withTaskGroup(of: Optional<([(URL, Result<ImageSource, ImagePipelineError>)], ImagePrefetcher.Counts)>.self) { group in
            group.addTask {
                var finished: [(URL, Result<ImageSource, ImagePipelineError>)] = []
                for await event in events {
                    switch event {
                    case .finished(let url, let result): finished.append((url, result))
                    case .allDone(let counts): return (finished, counts)
                    }
                }
                return nil
            }
            group.addTask { try? await Task.sleep(for: timeout); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first.map { (finished: $0.0, counts: $0.1) }
        }
    }

    func path(_ name: String) -> String { "/images/\(name)" }

    @Test func countsFinishedSkippedAndTotalAndIgnoresRepeats() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            let perURL = Recorder<String>()
            prefetcher.onFinished = { url, result in perURL.append("\(url.lastPathComponent) \((try? result.get()) != nil)") }
            let names = ["thumb-1.jpg", "thumb-2.jpg", "missing.jpg", "thumb-3.jpg", "thumb-4.jpg"]
            let urls = names.map { origin.imageURL($0, query: "delay=100") }
            let events = prefetcher.events()
            prefetcher.startPrefetching(urls + [urls[0]])   // a repeat in the list
            prefetcher.startPrefetching([urls[1]])          // a repeat while it loads
            let done = try #require(await untilAllDone(events))
            #expect(done.counts == ImagePrefetcher.Counts(finished: 4, skipped: 1, cancelled: 0, total: 5))
            #expect(done.counts.remaining == 0)
            #expect(done.finished.count == 5)
            #expect(done.finished.filter { $0.0.lastPathComponent == "missing.jpg" }.allSatisfy {
                if case .failure(.loadingFailed(.badStatusCode(404))) = $0.1 { true } else { false }
            })
            for name in names { #expect(origin.requestCount(path: path(name)) == 1) }
            #expect(await eventually { perURL.all.count == 5 })
            #expect(Set(perURL.all) == ["thumb-1.jpg true", "thumb-2.jpg true", "missing.jpg false", "thumb-3.jpg true", "thumb-4.jpg true"])
            #expect(prefetcher.counts == done.counts)

            // Memory destination: the decoded images are in the memory cache; asking again
            // counts them finished at once, with no request; the counts start a new batch.
            for url in urls where url.lastPathComponent != "missing.jpg" { #expect(pipeline.cachedImage(for: url) != nil) }
            let again = prefetcher.events()
            let before = origin.totalRequests
            prefetcher.startPrefetching(Array(urls[0...1]))
            let second = try #require(await untilAllDone(again))
            #expect(second.counts == ImagePrefetcher.Counts(finished: 2, skipped: 0, cancelled: 0, total: 2))
            #expect(second.finished.allSatisfy { (try? $0.1.get()) == .memory })
            #expect(origin.totalRequests == before)
        }
    }

    @Test func atMostThreeLoadAtOnceByDefaultAndTheRestWaitInThePrefetcher() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)   // the downloader allows 6
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            #expect(prefetcher.maxConcurrent == 3 && prefetcher.priority == .low)
            let events = prefetcher.events()
            prefetcher.startPrefetching((1...12).map { origin.imageURL("thumb-\($0).jpg", query: "delay=150") })
            #expect(await eventually { origin.totalRequests == 3 })
            #expect(pipeline.configuration.downloader.queuedDownloads == 0)   // waiting here, not there
            let done = try #require(await untilAllDone(events))
            #expect(done.counts.finished == 12)
            #expect(origin.totalRequests == 12)
            #expect(origin.maxConcurrentRequests == 3)
        }
    }

    @Test func diskDestinationStoresTheOriginalBytesWithoutDecoding() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try makeTestPipeline(cacheDirectory: directory)
            let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
            let names = ["photo.jpg", "logo.png", "photo.webp"]
            let events = prefetcher.events()
            prefetcher.startPrefetching(names.map { origin.imageURL($0) })
            let done = try #require(await untilAllDone(events))
            #expect(done.counts == ImagePrefetcher.Counts(finished: 3, skipped: 0, cancelled: 0, total: 3))
            #expect(done.finished.allSatisfy { (try? $0.1.get()) == .network })
            #expect(pipeline.statistics.decodes == 0)
            await pipeline.flushPendingStores()
            let disk = try DiskCache(directory: directory)
            for name in names {
                #expect(pipeline.cachedImage(for: origin.imageURL(name)) == nil)
                #expect(await disk.data(for: origin.imageURL(name).absoluteString) == SampleFiles.standard[name])
            }
        }
    }

    @Test(arguments: [ImagePrefetcher.Destination.memoryCache, .diskCache])
    func aDisplayLoadJoinsThePrefetch(destination: ImagePrefetcher.Destination) async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory())
            let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: destination)
            let url = origin.imageURL("photo.jpg", query: "delay=400")
            let events = prefetcher.events()
            prefetcher.startPrefetching([url])
            #expect(await eventually { origin.requestCount(path: path("photo.jpg")) == 1 })
            let shown = try await pipeline.image(for: url)
            #expect(shown.image.pixelWidth == 1000 && shown.source == .network)
            let done = try #require(await untilAllDone(events))
            #expect(done.counts.finished == 1)
            #expect(origin.requestCount(path: path("photo.jpg")) == 1)
            #expect(pipeline.statistics.downloads == 1)
            #expect(pipeline.statistics.decodes == 1)   // the display's; the disk prefetch decodes nothing
        }
    }

    /// One download slot and a suspended download queue: the prefetch (low) and a normal load
    /// wait in the downloader (and, with `display`, a high-priority load of the prefetched URL
    /// joins it) before the queue resumes. The order the origin sees them in shows the
    /// prefetch's priority.
    func arrivalOrder(destination: ImagePrefetcher.Destination, display: Bool, origin: ImageOrigin) async throws -> [String] {
        let pipeline = try makeTestPipeline(cacheDirectory: temporaryDirectory()) { $0.maxConcurrentDownloads = 1 }
        let downloader = pipeline.configuration.downloader
        downloader.suspend()
        let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: destination)
        let events = prefetcher.events()
        prefetcher.startPrefetching([origin.imageURL("thumb-1.jpg")])
        #expect(await eventually { downloader.queuedDownloads == 1 })
        let normal = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-2.jpg"), priority: .normal))
        #expect(await eventually { downloader.queuedDownloads == 2 })
        let shown = display ? pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-1.jpg"), priority: .high)) : nil
        if display { #expect(await eventually { downloader.queuedDownloads(at: .high) == 1 }) }
        downloader.resume()
        for task in [normal] + (shown.map { [$0] } ?? []) { _ = try await task.response }
        let done = try #require(await untilAllDone(events))
        #expect(done.counts.finished == 1)
        #expect(origin.requestCount(path: path("thumb-1.jpg")) == 1)
        return origin.requests.map { String($0.path.split(separator: "/").last ?? "") }
    }

    @Test(arguments: [ImagePrefetcher.Destination.memoryCache, .diskCache])
    func aDisplayLoadLiftsThePrefetchPriority(destination: ImagePrefetcher.Destination) async throws {
        try await withOrigin { origin in
            let order = try await arrivalOrder(destination: destination, display: true, origin: origin)
            #expect(order == ["thumb-1.jpg", "thumb-2.jpg"])
        }
    }

    @Test func withoutADisplayLoadThePrefetchWaitsBehindNormalLoads() async throws {
        try await withOrigin { origin in
            let order = try await arrivalOrder(destination: .memoryCache, display: false, origin: origin)
            #expect(order == ["thumb-2.jpg", "thumb-1.jpg"])
        }
    }

    @Test func stoppingOneCancelsItLoadingOrWaitingAndTheBatchStillEnds() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let prefetcher = ImagePrefetcher(pipeline: pipeline, maxConcurrent: 1)
            let urls = (1...4).map { origin.imageURL("thumb-\($0).jpg", query: "delay=300") }
            let events = prefetcher.events()
            prefetcher.startPrefetching(urls)
            #expect(await eventually { origin.requestCount(path: path("thumb-1.jpg")) == 1 })
            prefetcher.stopPrefetching([urls[0], urls[2]])   // one loading, one waiting
            #expect(prefetcher.counts.cancelled == 2)
            let done = try #require(await untilAllDone(events))
            #expect(done.counts == ImagePrefetcher.Counts(finished: 2, skipped: 0, cancelled: 2, total: 4))
            #expect(done.finished.filter { if case .failure(.cancelled) = $0.1 { true } else { false } }.map(\.0) == [urls[0], urls[2]])
            #expect(origin.requestCount(path: path("thumb-3.jpg")) == 0)
            #expect(origin.totalRequests == 3)
            #expect(pipeline.cachedImage(for: urls[0]) == nil && pipeline.cachedImage(for: urls[1]) != nil)
        }
    }

    @Test func stopAllCancelsEverythingThenAllDoneComesAndANewBatchStartsClean() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil)
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            let allDone = Recorder<ImagePrefetcher.Counts>()
            prefetcher.onAllDone = { allDone.append($0) }
            let urls = (1...12).map { origin.imageURL("thumb-\($0).jpg", query: "delay=400") }
            prefetcher.startPrefetching(urls)
            #expect(await eventually { origin.totalRequests == 3 })
            prefetcher.stopAll()
            #expect(await eventually { allDone.all.count == 1 })
            let counts = try #require(allDone.all.first)
            #expect(counts.total == 12 && counts.remaining == 0)
            #expect(counts.cancelled == 12 - counts.finished && counts.skipped == 0)
            #expect(counts.cancelled >= 9)
            #expect(origin.totalRequests == 3)

            // Stopped URLs can be prefetched again; the next batch has its own counts.
            prefetcher.startPrefetching([urls[0]])
            #expect(await eventually { allDone.all.count == 2 })
            #expect(allDone.all.last == ImagePrefetcher.Counts(finished: 1, skipped: 0, cancelled: 0, total: 1))
            #expect(pipeline.cachedImage(for: urls[0]) != nil)
        }
    }

    @Test func changingThePriorityReachesWaitingAndLoadingPrefetches() async throws {
        try await withOrigin { origin in
            let pipeline = try makeTestPipeline(cacheDirectory: nil) { $0.maxConcurrentDownloads = 1 }
            let downloader = pipeline.configuration.downloader
            downloader.suspend()  // both wait in the queue until the priority has changed
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            let events = prefetcher.events()
            prefetcher.startPrefetching([origin.imageURL("thumb-1.jpg")])
            #expect(await eventually { downloader.queuedDownloads == 1 })
            let normal = pipeline.imageTask(with: ImageRequest(url: origin.imageURL("thumb-2.jpg"), priority: .normal))
            #expect(await eventually { downloader.queuedDownloads == 2 })
            prefetcher.priority = .veryHigh
            #expect(prefetcher.priority == .veryHigh)
            #expect(await eventually { downloader.queuedDownloads(at: .veryHigh) == 1 })
            downloader.resume()
            _ = try await normal.response
            _ = try #require(await untilAllDone(events))
            let order = origin.requests.map { String($0.path.split(separator: "/").last ?? "") }
            #expect(order == ["thumb-1.jpg", "thumb-2.jpg"])
        }
    }

    struct CLISummary: Decodable {
        var requested, finished, skipped: Int
        var seconds: Double
        var failures: [[String: String]]
    }

    @Test func prefetchCommandWarmsTheDiskCacheForFetchCacheOnly() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            let names = ["photo.jpg", "logo.png", "spinner.gif", "thumb-5.jpg"]
            let urls = names.map { origin.imageURL($0).absoluteString }
            let missing = origin.imageURL("missing.jpg").absoluteString

            let failed = try await WebImageCommand.run(["prefetch"] + urls + [missing, "--cache-dir", cache.path, "--json", "--concurrency", "2"])
            #expect(failed.status == 3, "\(failed.stderr)")  // done, with failures (as fetch)
            let summary = try JSONDecoder().decode(CLISummary.self, from: Data(failed.stdout.utf8))
            #expect(summary.requested == 5 && summary.finished == 4 && summary.skipped == 1)
            #expect(summary.failures.map { $0["url"] } == [missing])
            #expect(summary.seconds > 0)
            #expect(origin.maxConcurrentRequests <= 2)

            // From standard input, text summary: every image now comes from the disk cache.
            let before = origin.totalRequests
            let again = try await WebImageCommand.run(["prefetch", "--input", "-", "--cache-dir", cache.path], stdin: urls.joined(separator: "\n"))
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("4 requested, 4 finished, 0 skipped in "))
            #expect(origin.totalRequests == before)

            let fetched = try await WebImageCommand.run(
                ["fetch"] + urls + ["--cache-only", "--output", temporaryDirectory().path, "--cache-dir", cache.path, "--json"])
            #expect(fetched.status == 0, "\(fetched.stderr)")
            let fetch = try JSONDecoder().decode(CommandLineTests.Summary.self, from: Data(fetched.stdout.utf8))
            #expect(fetch.succeeded == 4 && fetch.fromDisk == 4 && fetch.failed == 0)
            #expect(origin.totalRequests == before)
        }
    }

    @Test func prefetchCommandRejectsBadInput() async throws {
        let none = try await WebImageCommand.run(["prefetch", "--cache-dir", temporaryDirectory().path])
        #expect(none.status == 64 && none.stderr.contains("no URLs given"))
        let zero = try await WebImageCommand.run(["prefetch", "http://127.0.0.1:1/a.jpg", "--concurrency", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("--concurrency must be at least 1"))
        let invalid = try await WebImageCommand.run(["prefetch", "not a url", "--cache-dir", temporaryDirectory().path, "--json"])
        #expect(invalid.status == 3)
        #expect(invalid.stdout.contains("\"skipped\":1") && invalid.stdout.contains("invalid URL"))
    }
}
