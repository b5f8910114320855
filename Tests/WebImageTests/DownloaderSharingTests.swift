import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Only the same request shares a download: the origin answers differently per header, and
/// every caller gets the answer to its own request.
@Suite("Downloader sharing: only what is the same request")
struct DownloaderSharingTests {
    static let credentials = Credentials(user: "user", password: "secret")

    /// Starts `requests` at once (each in its own task) and returns their outcomes in order.
    static func concurrently(
        _ downloader: ImageDownloader, _ requests: [ImageDownloadRequest]
    ) async -> [Result<DownloadResult, ImageDownloadError>] {
        let tasks = requests.map { request in
            Task { () async -> Result<DownloadResult, ImageDownloadError> in
                do throws(ImageDownloadError) { return .success(try await downloader.download(request)) } catch { return .failure(error) }
            }
        }
        var results: [Result<DownloadResult, ImageDownloadError>] = []
        for task in tasks { results.append(await task.value) }
        return results
    }

    @Test(arguments: LoaderKind.allCases)
    func aCallerWithoutCredentialsNeverGetsAnotherCallersBytes(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let url = origin.url("/auth/images/photo.jpg?delay=300")
            let results = await Self.concurrently(downloader, [
                ImageDownloadRequest(url: url, credentials: Self.credentials),
                ImageDownloadRequest(url: url),
                ImageDownloadRequest(url: url, headers: [HTTPField("Authorization", "Basic " + Data("user:secret".utf8).base64EncodedString())]),
                ImageDownloadRequest(url: url, credentials: Credentials(user: "user", password: "wrong")),
            ])
            #expect(results[0].success?.data == SampleFiles.standard["photo.jpg"])
            #expect(results[1].failure == .badStatusCode(401))
            #expect(results[2].success?.data == SampleFiles.standard["photo.jpg"])
            #expect(results[3].failure == .badStatusCode(401))
            // Four different requests: none joined another.
            #expect(origin.requests.filter { $0.path == "/auth/images/photo.jpg" && $0.status == 200 }.count == 2)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func aPlainCallerNeverGetsAConditionalCallersNotModified(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let first = try await downloader.download(origin.imageURL("photo.jpg"))
            let validators = try #require(CacheValidators(response: first.response))
            let url = origin.imageURL("photo.jpg", query: "delay=300")
            let results = await Self.concurrently(downloader, [
                ImageDownloadRequest(url: url, validators: validators),
                ImageDownloadRequest(url: url),
            ])
            let conditional = try #require(results[0].success), plain = try #require(results[1].success)
            #expect(conditional.isNotModified && conditional.data.isEmpty)
            #expect(!plain.isNotModified && plain.data == SampleFiles.standard["photo.jpg"])
            #expect(origin.requestCount(path: "/images/photo.jpg") == 3)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func callersAcceptingDifferentFormatsGetTheirOwnAnswer(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let url = origin.url("/negotiate/photo?delay=300")
            let results = await Self.concurrently(downloader, [
                ImageDownloadRequest(url: url, headers: [HTTPField("Accept", "image/webp")]),
                ImageDownloadRequest(url: url, headers: [HTTPField("Accept", "image/jpeg")]),
                ImageDownloadRequest(url: url, headers: [HTTPField("Accept", "image/webp")]),
            ])
            #expect(results[0].success?.data == SampleFiles.standard["photo.webp"])
            #expect(results[1].success?.data == SampleFiles.standard["photo.jpg"])
            #expect(results[2].success?.data == SampleFiles.standard["photo.webp"])
            // The two WebP callers are the same request: three callers, two downloads.
            #expect(origin.requestCount(path: "/negotiate/photo") == 2)
            // The caller's Accept replaced the downloader's default instead of going beside it.
            #expect(Set(origin.requests.compactMap { $0.headers["accept"] }) == ["image/webp", "image/jpeg"])
        }
    }

    @Test func rangeCookieAndCustomHeadersSeparateRequests() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader()
            let url = origin.imageURL("photo.jpg", query: "delay=300")
            let results = await Self.concurrently(downloader, [
                ImageDownloadRequest(url: url),
                ImageDownloadRequest(url: url, headers: [HTTPField("Range", "bytes=100-")]),
                ImageDownloadRequest(url: url, headers: [HTTPField("Cookie", "session=abc123")]),
                ImageDownloadRequest(url: url, headers: [HTTPField("X-Tenant", "a")]),
                ImageDownloadRequest(url: url, headers: [HTTPField("X-Tenant", "a")]),
                ImageDownloadRequest(url: url),
            ])
            let photo = try #require(SampleFiles.standard["photo.jpg"])
            #expect(results[1].success?.data == photo.dropFirst(100))
            for index in [0, 2, 3, 4, 5] { #expect(results[index].success?.data == photo) }
            #expect(origin.requestCount(path: "/images/photo.jpg") == 4)
        }
    }

    @Test func sharingIsConfigurable() async throws {
        try await withOrigin { origin in
            let url = origin.imageURL("small.jpg", query: "delay=300")
            let tagged = { (id: String) in ImageDownloadRequest(url: url, headers: [HTTPField("X-Request-ID", id)]) }
            let ignoring = LoaderKind.asyncHTTPClient.downloader { $0.sharing = .byRequest(ignoringHeaders: ["x-request-id"]) }
            _ = await Self.concurrently(ignoring, [tagged("1"), tagged("2"), tagged("3")])
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)

            let never = LoaderKind.asyncHTTPClient.downloader { $0.sharing = .never }
            _ = await Self.concurrently(never, [ImageDownloadRequest(url: url), ImageDownloadRequest(url: url)])
            #expect(origin.requestCount(path: "/images/small.jpg") == 3)

            // An explicit identity shares whatever else differs: the caller vouches for it.
            let standard = LoaderKind.asyncHTTPClient.downloader()
            _ = await Self.concurrently(standard, [
                ImageDownloadRequest(url: url, headers: [HTTPField("X-A", "1")], identity: "same"),
                ImageDownloadRequest(url: url, headers: [HTTPField("X-A", "2")], identity: "same"),
            ])
            #expect(origin.requestCount(path: "/images/small.jpg") == 4)

            // ...for one URL only: the same identity for two URLs is two downloads, each caller
            // getting its own URL's bytes (they were one, the second caller given the first's).
            let other = origin.imageURL("logo.png", query: "delay=300")
            let results = await Self.concurrently(standard, [
                ImageDownloadRequest(url: url, identity: "user-1"), ImageDownloadRequest(url: other, identity: "user-1"),
            ])
            #expect(origin.requestCount(path: "/images/small.jpg") == 5 && origin.requestCount(path: "/images/logo.png") == 1)
            #expect(results.map { try? $0.get().data } == [SampleFiles.standard["small.jpg"], SampleFiles.standard["logo.png"]])
        }
    }

    @Test func aDownloadStartedBeforeAGlobalHeaderChangeTakesNoLaterCallers() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader()
            let url = origin.imageURL("small.jpg", query: "delay=1000")
            let before = Task { try await downloader.download(url) }
            #expect(await eventually { origin.requestCount(path: "/images/small.jpg") == 1 })
            downloader.setHeader("Bearer new-token", for: "Authorization")
            let after = try await downloader.download(url)
            _ = try await before.value
            #expect(after.data == SampleFiles.standard["small.jpg"])
            #expect(origin.requests.map { $0.headers["authorization"] } == [nil, "Bearer new-token"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func aJoinerWithAShorterTimeoutFailsOnTimeAlone(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let url = origin.imageURL("photo.jpg", query: "delay=10000")
            // Patient: well beyond the 10 s hold (the default 15 s left a loaded CI machine 5 s).
            let patient = Task { try await downloader.download(ImageDownloadRequest(url: url, timeout: .seconds(60))) }
            #expect(await eventually { origin.requestCount(path: "/images/photo.jpg") == 1 })
            let started = ContinuousClock.now
            let error = await downloadError { _ = try await downloader.download(ImageDownloadRequest(url: url, timeout: .milliseconds(300))) }
            let waited = ContinuousClock.now - started
            #expect(error == .timedOut)
            #expect(waited >= .milliseconds(300) && waited < .milliseconds(8000))  // the download takes 10 s
            // The shared download went on for the patient caller, with no second request.
            let shared = try await patient.value
            #expect(shared.data == SampleFiles.standard["photo.jpg"])
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)
        }
    }

    @Test func aJoinersTimeoutStartsWhenTheSharedDownloadLeavesTheQueue() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader { $0.maxConcurrentDownloads = 1 }
            let blocker = Task { try await downloader.download(origin.imageURL("landscape.jpg", query: "delay=\(8000 * TestTime.scale)")) }
            #expect(await eventually { downloader.activeDownloads == 1 })
            let url = origin.imageURL("small.jpg")
            let first = Task { try await downloader.download(ImageDownloadRequest(url: url)) }
            #expect(await eventually { downloader.queuedDownloads == 1 })
            // Waits ~8 s in the queue, then a short transfer: within its own 6 s, which counts from
            // the download's start, as a caller's timeout does when it downloads alone. (3 s, 2 s
            // and 1.5 s left too little for the transfer when a full run starved the pool.)
            let joiner = try await downloader.download(ImageDownloadRequest(url: url, timeout: TestTime.scaled(.milliseconds(6000))))
            #expect(joiner.data == SampleFiles.standard["small.jpg"])
            _ = try await first.value
            _ = try await blocker.value
            #expect(origin.requestCount(path: "/images/small.jpg") == 1)
        }
    }
}

extension Result {
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
    var success: Success? { if case .success(let value) = self { value } else { nil } }
}
