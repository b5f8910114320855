import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The look-up of two-stage loading is a request like any other: modifier, credentials,
/// cookies, retries, its own timeout; transient failures are never remembered, permanent ones are.
@Suite("Two-stage look-ups are full requests")
struct LookupRequestTests {
    static let resolver = LookupResolver { $0.path.hasPrefix("/lookup/") }

    @Test(arguments: LoaderKind.allCases)
    func theLookupGoesThroughTheModifierCredentialsAndCookies(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader {
                $0.resolvers = [Self.resolver]
                $0.handlesCookies = true
                $0.requestModifier = { request in
                    var request = request
                    request.headers.removeAll { $0.name.lowercased() == "user-agent" }
                    request.headers.append(HTTPField("User-Agent", "Modified/1"))
                    return request
                }
            }
            _ = try await downloader.download(origin.url("/cookie/set"))
            let request = ImageDownloadRequest(url: origin.url("/lookup/small.jpg?auth=1&cookie=1"), credentials: .init(user: "user", password: "secret"))
            let result = try await downloader.download(request)
            #expect(result.data == SampleFiles.standard["small.jpg"])
            let lookups = origin.requests.filter { $0.path == "/lookup/small.jpg" }
            // The challenge, then the answer with the credentials; both with the cookie and the modifier's header.
            #expect(lookups.map(\.status) == [401, 200])
            #expect(lookups.allSatisfy { $0.headers["user-agent"] == "Modified/1" && $0.headers["cookie"] == "session=abc123" })
            #expect(lookups.last?.headers["authorization"] == "Basic " + Data("user:secret".utf8).base64EncodedString())
        }
    }

    @Test func aLookupRefusedByTheModifierFails() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader {
                $0.resolvers = [Self.resolver]
                $0.requestModifier = { $0.url.path.hasPrefix("/lookup/") ? nil : $0 }
            }
            #expect(await downloadError { _ = try await downloader.download(origin.url("/lookup/small.jpg")) } == .requestRefused)
            #expect(origin.requests.isEmpty)
        }
    }

    @Test func aFailedLookupIsRetriedByThePolicy() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader {
                $0.resolvers = [Self.resolver]
                $0.retryPolicy = RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(20))
            }
            let result = try await downloader.download(origin.url("/lookup/small.jpg?fails=2"))
            #expect(result.data == SampleFiles.standard["small.jpg"])
            #expect(origin.requests.map(\.status) == [503, 503, 200, 200])
        }
    }

    @Test func aLookupHasItsOwnTimeout() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader {
                $0.resolvers = [Self.resolver]
                $0.lookupTimeout = .milliseconds(300)
                // One attempt: retries of a timed-out look-up (transient) with their backoff took
                // most of the 8 s bound on a loaded machine, and are tested elsewhere.
                $0.retryPolicy = .none
            }
            let started = ContinuousClock.now
            let error = await downloadError { _ = try await downloader.download(origin.url("/lookup/small.jpg?delay=\(10_000 * TestTime.scale)")) }
            #expect(error == .lookupFailed(.timedOut))
            #expect(error?.isTransient == true)
            #expect(ContinuousClock.now - started < TestTime.scaled(.seconds(8)))  // the answer would take 10 s (scaled)
        }
    }

    @Test func transientLookupFailuresAreNotRemembered() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader { $0.resolvers = [Self.resolver] }
            let pipeline = ImagePipeline(configuration: .init(downloader: downloader))
            let url = origin.url("/lookup/small.jpg?fails=1")
            await #expect(throws: ImagePipelineError.loadingFailed(.lookupFailed(.badStatusCode(503)))) { try await pipeline.image(for: url) }
            // Not on the failed list: the next call asks again, and succeeds.
            let second = try await pipeline.image(for: url)
            #expect(second.source == .network)
            #expect(origin.requestCount(path: "/lookup/small.jpg") == 2)
        }
    }

    @Test func permanentLookupFailuresAreRemembered() async throws {
        try await withOrigin { origin in
            let downloader = LoaderKind.asyncHTTPClient.downloader {
                $0.resolvers = [LookupResolver { $0.path.hasPrefix("/lookup/") || $0.path == "/text" }]
            }
            let pipeline = ImagePipeline(configuration: .init(downloader: downloader))
            let missing = origin.url("/lookup/small.jpg?status=404"), unparsable = origin.url("/text")
            for _ in 0..<2 {
                await #expect(throws: ImagePipelineError.loadingFailed(.lookupFailed(.badStatusCode(404)))) { try await pipeline.image(for: missing) }
                await #expect { try await pipeline.image(for: unparsable) } throws: { error in
                    guard case .loadingFailed(.resolverFailed)? = error as? ImagePipelineError else { return false }
                    return true
                }
            }
            #expect(origin.requestCount(path: "/lookup/small.jpg") == 1)
            #expect(origin.requestCount(path: "/text") == 1)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cancellingDuringTheImageStageDropsTheImageTransfer(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.resolvers = [Self.resolver] }
            let slow = "imageQuery=" + "chunk=2000&stall=100".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let token = downloader.downloadToken(ImageDownloadRequest(url: origin.url("/lookup/photo.jpg?" + slow)))
            #expect(await eventually { origin.bytesSent(path: "/images/photo.jpg") > 0 })
            let started = ContinuousClock.now
            token.cancel()
            #expect(await downloadError { _ = try await token.result }?.isCancelled == true)
            #expect(ContinuousClock.now - started < .seconds(6))  // the body would take about 8 s
            #expect(await eventually { origin.abortedBodies(path: "/images/photo.jpg") == 1 })
            #expect(origin.bytesSent(path: "/images/photo.jpg") < SampleFiles.standard["photo.jpg"]!.count)
        }
    }
}
