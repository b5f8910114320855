import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The retry policy as the server sees it: the gap between attempts, measured at the origin.
@Suite("Retry backoff observed at the origin")
struct RetryBackoffTests {
    @Test(arguments: LoaderKind.allCases)
    func aRetryAfterOfOneSecondIsHonoured(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 1, baseDelay: .milliseconds(10)) }
            let result = try await downloader.download(origin.url("/flaky/small.jpg?fails=1&failStatus=503&retryAfter=1"))
            #expect(result.data == SampleFiles.standard["small.jpg"])
            let arrivals = origin.requests.filter { $0.path == "/flaky/small.jpg" }
            #expect(arrivals.map(\.status) == [503, 200])
            let gap = arrivals[1].arrivedAt - arrivals[0].arrivedAt
            #expect(gap >= .seconds(1), "the retry came \(gap) after the 503")
            #expect(gap < TestTime.scaled(.seconds(10)))  // scaled: under Thread Sanitizer a retry took 10.1 s
        }
    }

    @Test func theExponentialBackoffSpacesAttemptsOut() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader {
                $0.retryPolicy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(200))
            }
            _ = try await downloader.download(origin.url("/flaky/small.jpg?fails=3&failStatus=500"))
            let times = origin.requests.filter { $0.path == "/flaky/small.jpg" }.map(\.arrivedAt)
            #expect(times.count == 4)
            // 200 ms, 400 ms, 800 ms: each gap at least its delay.
            for (index, minimum) in [200, 400, 800].enumerated() {
                let gap = times[index + 1] - times[index]
                #expect(gap >= .milliseconds(minimum), "gap \(index + 1) was \(gap)")
            }
        }
    }

    /// A request's ``RetryBudget`` caps the policy's retries and is spent by them: a policy of
    /// five retries with a budget of one sends two requests, and a second download of the same
    /// image with the spent budget sends one. The caller sees what is left.
    @Test(arguments: LoaderKind.allCases)
    func aRetryBudgetCapsTheRetriesAcrossDownloads(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 5, baseDelay: .milliseconds(10)) }
            let budget = RetryBudget(retries: 1)
            var request = ImageDownloadRequest(url: origin.url("/flaky/small.jpg?fails=9&failStatus=500"))
            request.retryBudget = budget
            await #expect(throws: ImageDownloadError.badStatusCode(500)) { try await downloader.download(request) }
            #expect(origin.requests.filter { $0.path == "/flaky/small.jpg" }.count == 2)
            #expect(budget.remaining == 0 && !budget.draw())
            await #expect(throws: ImageDownloadError.badStatusCode(500)) { try await downloader.download(request) }
            #expect(origin.requests.filter { $0.path == "/flaky/small.jpg" }.count == 3)
            // A permanent failure draws nothing.
            let kept = RetryBudget(retries: 2)
            request.url = origin.url("/status/404")
            request.retryBudget = kept
            await #expect(throws: (any Error).self) { try await downloader.download(request) }
            #expect(kept.remaining == 2)
            #expect(RetryBudget(retries: -3).remaining == 0)
        }
    }
}

