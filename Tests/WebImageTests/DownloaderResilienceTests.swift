import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Downloader against slow, dying and lying servers")
struct DownloaderResilienceTests {
    @Test(arguments: LoaderKind.allCases)
    func stalledServerTimesOut(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.timeout = .milliseconds(400) }
            let stalled = origin.imageURL("photo.jpg", query: "chunk=1000&stall=5000")
            #expect(await downloadError { _ = try await downloader.download(stalled) } == .timedOut)
            let slowHead = ImageDownloadRequest(url: origin.imageURL("small.jpg", query: "delay=3000"), timeout: .milliseconds(200))
            #expect(await downloadError { _ = try await downloader.download(slowHead) } == .timedOut)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func hugeTimeoutMeansNoneAndDoesNotTrap(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.timeout = .seconds(Int64.max / 2) }
            let result = try await downloader.download(origin.imageURL("small.jpg"))
            #expect(result.data == SampleFiles.standard["small.jpg"])
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func timedOutAttemptIsRetriedAndResumes(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            // The first answer sends 20,000 bytes and then hangs: the attempt times out, and the
            // retry (which runs in a new task, the timed-out one being cancelled) resumes.
            let timeout = TestTime.scaled(.seconds(8))
            let downloader = loader.downloader(timeout: timeout, retryingOnceAfter: .milliseconds(10))
            let started = ContinuousClock.now
            let result: DownloadResult
            let hang = 20_000 * TestTime.scale  // ms, longer than the timeout
            do { result = try await downloader.download(origin.url("/flaky/photo.jpg?fails=1&cut=20000&hang=\(hang)")) } catch {
                Issue.record("\(error) after \(ContinuousClock.now - started): \(origin.requests.map { "\($0.path) \($0.status) \($0.headers)" })")
                return
            }
            #expect(result.data == SampleFiles.standard["photo.jpg"])
            // Not before the timeout: FoundationNetworking truncates its own interval to whole
            // seconds (0.5 s fired at once) unless the loader rounds it up. (8 s: under a loaded test
            // run the first 20,000 bytes took over 4 s, and the attempt timed out with nothing to
            // resume; and the resumed rest took over 4 s, and the retry timed out too.)
            #expect(ContinuousClock.now - started >= timeout)
            #expect(origin.requests.count == 2)
            #expect(origin.requests.last?.headers["range"] == "bytes=20000-")
            #expect(origin.requests.last?.status == 206)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cancellingDuringTheBackoffAfterATimeoutEndsTheDownload(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            // A 30 s backoff: the bounds below leave room for a loaded machine and still tell a
            // cancelled wait from one that ran out.
            let downloader = loader.downloader(timeout: .milliseconds(300), retryingOnceAfter: .seconds(30))
            let events = downloader.events()
            let caller = Task { try await downloader.download(origin.url("/flaky/photo.jpg?fails=1&cut=20000&hang=10000")) }
            // Wait until the attempt has timed out and the retry waits out its backoff.
            #expect(await eventually { origin.requests.count == 1 })
            try await Task.sleep(for: .milliseconds(800))
            let cancelled = ContinuousClock.now
            caller.cancel()
            let error = await downloadError { _ = try await caller.value }
            #expect(error == .cancelled)
            #expect(ContinuousClock.now - cancelled < .seconds(10))
            // The download itself ended (not only its caller): its task reports the cancellation.
            let ended = Task {
                for await event in events { if case .cancelled = event { return true } }
                return false
            }
            let watchdog = Task { try await Task.sleep(for: .seconds(20)); ended.cancel() }
            #expect(await ended.value)
            watchdog.cancel()
            #expect(ContinuousClock.now - cancelled < .seconds(20))
            #expect(origin.requests.count == 1)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func bodyCutMidwayIsATransientTransportError(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let error = await downloadError { _ = try await downloader.download(origin.imageURL("photo.jpg", query: "truncate=1000")) }
            guard case .transport? = error else { Issue.record("unexpected \(String(describing: error))"); return }
            #expect(error?.isTransient == true)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func lyingContentLengthTimesOutInsteadOfHanging(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.timeout = .milliseconds(500) }
            #expect(await downloadError { _ = try await downloader.download(origin.imageURL("small.jpg", query: "lie=100")) } == .timedOut)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func oversizedBodyIsRefusedWithoutBeingBuffered(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.maxBodySize = 1 << 20 }
            let size = 256 << 20
            // Declared over the limit: refused from the head, the connection closed at once.
            let declared = await downloadError { _ = try await downloader.download(origin.url("/big?size=\(size)")) }
            #expect(declared == .tooLarge(limit: 1 << 20, declared: size))
            #expect(await eventually(timeout: .seconds(30)) { origin.abortedBodies(path: "/big") == 1 })
            let sentDeclared = origin.bytesSent(path: "/big")
            // Undeclared: read up to the limit, then the connection is closed.
            let streamed = await downloadError { _ = try await downloader.download(origin.url("/big?size=\(size)&length=0&v=2")) }
            #expect(streamed == .tooLarge(limit: 1 << 20, declared: nil))
            #expect(await eventually(timeout: .seconds(30)) { origin.abortedBodies(path: "/big") == 2 })
            let sentStreamed = origin.bytesSent(path: "/big") - sentDeclared
            // What the server wrote before it saw the close is what the client read plus what the
            // loopback socket buffers held. Seen with a release build running alongside: 2–12 MB
            // (AsyncHTTPClient), 5–26 MB (URLSession, whose libcurl reads — and the loader drops —
            // until the cancellation reaches libcurl's queue); in a full test run on the loaded
            // machine 67 MB (URLSession) and 73 MB (AsyncHTTPClient) were seen, so the bound is
            // half of the body: neither body was read through.
            #expect(sentDeclared < size / 2)
            #expect(sentStreamed < size / 2)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func interruptedDownloadResumesWithRangeAndIfRange(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 1, baseDelay: .milliseconds(10)) }
            let result = try await downloader.download(origin.url("/flaky/photo.jpg?fails=1&cut=20000"))
            #expect(result.data == SampleFiles.standard["photo.jpg"])
            let requests = origin.requests
            #expect(requests.count == 2)
            #expect(requests[1].headers["range"] == "bytes=20000-")
            #expect(requests[1].headers["if-range"] != nil)
            #expect(requests[1].status == 206)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func resumeAnsweredWithFullBodyRestarts(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 1, baseDelay: .milliseconds(10)) }
            let result = try await downloader.download(origin.url("/flaky/photo.jpg?fails=1&cut=20000&norange=1"))
            #expect(result.data == SampleFiles.standard["photo.jpg"])
            #expect(origin.requests.map(\.status) == [200, 200])
            #expect(origin.requests[1].headers["range"] == "bytes=20000-")
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func resumeWorksAcrossSeparateDownloadCalls(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let url = origin.url("/flaky/landscape.jpg?fails=1&cut=30000")
            #expect(await downloadError { _ = try await downloader.download(url) }?.isTransient == true)
            let downloaded = try await downloader.download(url)
            #expect(downloaded.data == SampleFiles.standard["landscape.jpg"])
            #expect(origin.requests.last?.status == 206)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func transientStatusIsRetriedWithBackoffAndRetryAfter(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(10)) }
            let result: DownloadResult
            do { result = try await downloader.download(origin.url("/flaky/small.jpg?fails=2&failStatus=503&retryAfter=0")) } catch {
                Issue.record("\(error) \(origin.requests.map { "\($0.path) \($0.query ?? "") \($0.status)" })")
                return
            }
            #expect(result.data == SampleFiles.standard["small.jpg"])
            #expect(origin.requests.map(\.status) == [503, 503, 200])

            let gaveUp = await downloadError { _ = try await downloader.download(origin.url("/flaky/small.jpg?fails=9&failStatus=429&retryAfter=0")) }
            #expect(gaveUp == .badStatusCode(429))
            #expect(origin.requestCount(path: "/flaky/small.jpg") == 3 + 4)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func permanentFailuresAreNotRetried(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(10)) }
            #expect(await downloadError { _ = try await downloader.download(origin.imageURL("missing.jpg")) } == .badStatusCode(404))
            #expect(origin.requestCount(path: "/images/missing.jpg") == 1)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func refusedConnectionFailsPerAttemptNotPerConnectTimeout(loader: LoaderKind) async throws {
        // Nothing listens on port 1. Three attempts (two retries) must not each wait for the
        // 60 s connect timeout: the transport gives up on a refused connection at once.
        // One attempt may take this long (AsyncHTTPClient's connect timeout, URLSession's request
        // timeout); the three together must take less. (A long timeout, so that the wall clock,
        // which also counts waiting for a thread of the cooperative pool while CPU-heavy suites
        // run beside this one on 2 cores, cannot reach it: 10 s did, at 13-15 s, on a loaded machine.)
        // 120 s: at the start of a full run the suite's hundreds of tests keep the pool's two
        // threads busy for up to a minute, and this test starts then (61 s were measured).
        let connectTimeout = TestTime.scaled(.seconds(120))
        var configuration = ImageDownloaderConfiguration()
        configuration.retryPolicy = RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(10))
        configuration.timeout = connectTimeout
        let transport: any DataLoading = loader == .asyncHTTPClient ? HTTPDataLoader(connectTimeout: connectTimeout) : loader.make()
        let downloader = ImageDownloader(loader: transport, configuration: configuration)
        let started = ContinuousClock.now
        let error = await downloadError { _ = try await downloader.download(URL(string: "http://127.0.0.1:1/a.jpg")!) }
        guard case .transport? = error else { Issue.record("expected a transport error, got \(String(describing: error))"); return }
        #expect(error?.isTransient == true)
        #expect(ContinuousClock.now - started < connectTimeout)
    }

    @Test func retryPolicyDelays() {
        let policy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(100), maxDelay: .milliseconds(300), maxRetryAfter: .seconds(10))
        #expect(policy.delay(beforeRetry: 1, after: .timedOut, retryAfter: nil) == .milliseconds(100))
        #expect(policy.delay(beforeRetry: 2, after: .timedOut, retryAfter: nil) == .milliseconds(200))
        #expect(policy.delay(beforeRetry: 3, after: .badStatusCode(502), retryAfter: nil) == .milliseconds(300))
        #expect(policy.delay(beforeRetry: 4, after: .timedOut, retryAfter: nil) == nil)
        #expect(policy.delay(beforeRetry: 1, after: .badStatusCode(503), retryAfter: "7") == .seconds(7))
        #expect(policy.delay(beforeRetry: 1, after: .badStatusCode(429), retryAfter: "120") == .seconds(10))
        #expect(policy.delay(beforeRetry: 1, after: .badStatusCode(404), retryAfter: nil) == nil)
        #expect(policy.delay(beforeRetry: 1, after: .cancelled, retryAfter: nil) == nil)
        #expect(RetryPolicy.none.delay(beforeRetry: 1, after: .timedOut, retryAfter: nil) == nil)
    }
}

extension LoaderKind {
    /// A downloader with a short timeout that retries once after `backoff`.
    func downloader(timeout: Duration, retryingOnceAfter backoff: Duration) -> ImageDownloader {
        downloader {
            $0.timeout = timeout
            // maxDelay too: the policy caps every delay at its maxDelay (5 s by default), so a
            // "30 s" backoff was 5 s, and a run slow enough to spend 5 s before its cancel saw the
            // retry succeed first (CI, 2026-11-27: no error, two requests).
            $0.retryPolicy = RetryPolicy(maxRetries: 1, baseDelay: backoff, maxDelay: backoff)
        }
    }
}
