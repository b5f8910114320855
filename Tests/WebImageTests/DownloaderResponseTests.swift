import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Downloader requests and responses")
struct DownloaderResponseTests {
    @Test(arguments: LoaderKind.allCases)
    func defaultHeadersAndModifiersReachTheOrigin(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { configuration in
                configuration.requestModifier = { request in
                    if request.url.path.hasSuffix("refused.jpg") { return nil }
                    try await Task.sleep(for: .milliseconds(5))  // async work, e.g. fetching a token
                    var request = request
                    request.headers.append(HTTPField("Cookie", "token=from-modifier"))
                    return request
                }
            }
            _ = try await downloader.download(origin.imageURL("small.jpg"))
            let logged = try #require(origin.requests.first)
            #expect(logged.headers["accept"]?.hasPrefix("image/avif,image/webp") == true)
            #expect(logged.headers["user-agent"]?.hasPrefix("WebImage/") == true)
            #expect(logged.headers["cookie"] == "token=from-modifier")
            #expect(await downloadError { _ = try await downloader.download(origin.imageURL("refused.jpg")) } == .requestRefused)
            #expect(origin.requestCount(path: "/images/refused.jpg") == 0)

            downloader.setHeader("Custom/1.0", for: "user-agent")
            _ = try await downloader.download(origin.imageURL("logo.png"))
            #expect(origin.requests.last?.headers["user-agent"] == "Custom/1.0")
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func responseModifierCanReject(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            struct Rejected: Error {}
            let downloader = loader.downloader { configuration in
                configuration.responseModifier = { response in
                    guard response.value(forHeader: "Content-Type") == "image/jpeg" else { throw Rejected() }
                    return response
                }
            }
            _ = try await downloader.download(origin.imageURL("small.jpg"))
            let error = await downloadError { _ = try await downloader.download(origin.imageURL("logo.png")) }
            guard case .transport(let underlying)? = error else { Issue.record("unexpected \(String(describing: error))"); return }
            #expect(underlying is Rejected)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func statusCodesContentTypesAndEmptyBodies(loader: LoaderKind) async throws {
        try await withOrigin(files: ["empty.jpg": Data(), "small.jpg": SampleFiles.standard["small.jpg"]!]) { origin in
            let downloader = loader.downloader { $0.acceptableContentTypes = ["image/jpeg", "image/png"] }
            #expect(await downloadError { _ = try await downloader.download(origin.imageURL("missing.jpg")) } == .badStatusCode(404))
            #expect(await downloadError { _ = try await downloader.download(origin.url("/status/500")) } == .badStatusCode(500))
            #expect(await downloadError { _ = try await downloader.download(origin.url("/text")) } == .badContentType("text/plain"))
            #expect(await downloadError { _ = try await downloader.download(origin.imageURL("empty.jpg", query: "type=image/jpeg")) } == .emptyBody)
            #expect(await downloadError { _ = try await downloader.download(URL(string: "ftp://example.com/a.jpg")!) } == .invalidURL("ftp://example.com/a.jpg"))
            let downloaded = try await downloader.download(origin.imageURL("small.jpg"))
            #expect(downloaded.response.statusCode == 200)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func redirectsAreFollowedUpToTenAndLoopsRefused(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let result = try await downloader.download(origin.url("/redirect/3/small.jpg"))
            #expect(result.data == SampleFiles.standard["small.jpg"])
            #expect(await downloadError { _ = try await downloader.download(origin.url("/redirect/loop")) } == .tooManyRedirects)
            #expect(origin.requestCount(path: "/redirect/loop") <= 11)
            #expect(await downloadError { _ = try await downloader.download(origin.url("/redirect/12/small.jpg")) } == .tooManyRedirects)
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func unauthorizedThenSuccessWithCredentials(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let url = origin.url("/auth/images/small.jpg")
            let anonymous = loader.downloader()
            #expect(await downloadError { _ = try await anonymous.download(url) } == .badStatusCode(401))

            let downloader = loader.downloader { $0.credentials = Credentials(user: "user", password: "secret") }
            let downloaded = try await downloader.download(url)
            #expect(downloaded.data == SampleFiles.standard["small.jpg"])
            let statuses = origin.requests.suffix(2).map(\.status)
            #expect(statuses == [401, 200])
            #expect(origin.requests.last?.headers["authorization"] == Credentials(user: "user", password: "secret").basicAuthorization)

            let wrong = ImageDownloadRequest(url: url, credentials: Credentials(user: "user", password: "wrong"))
            #expect(await downloadError { _ = try await downloader.download(wrong) } == .badStatusCode(401))
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func cookiesAreStoredAndSentOnlyWhenEnabled(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let image = origin.url("/cookie/images/small.jpg")
            let withCookies = loader.downloader { $0.handlesCookies = true }
            _ = try await withCookies.download(origin.url("/cookie/set"))
            let downloaded = try await withCookies.download(image)
            #expect(downloaded.data == SampleFiles.standard["small.jpg"])
            #expect(origin.requests.last?.headers["cookie"] == "session=abc123")

            let without = loader.downloader()
            _ = try await without.download(origin.url("/cookie/set"))
            #expect(await downloadError { _ = try await without.download(image) } == .badStatusCode(403))
        }
    }

    @Test(arguments: LoaderKind.allCases)
    func notModifiedCarriesTheResponseForTheCache(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader()
            let first = try await downloader.download(origin.imageURL("logo.png"))
            let validators = try #require(CacheValidators(response: first.response))
            let request = ImageDownloadRequest(url: origin.imageURL("logo.png"), validators: validators)
            // A 304 is an answer, not an error: the result says so and carries the response head.
            let answer = try await downloader.download(request)
            #expect(answer.isNotModified && answer.response.statusCode == 304 && answer.data.isEmpty)
            #expect(origin.requests.last?.headers["if-none-match"] == validators.etag)
            #expect(origin.requests.last?.headers["if-modified-since"] == validators.lastModified)

            origin.setImage(SampleFiles.standard["small.jpg"]!, named: "logo.png")
            let downloaded = try await downloader.download(request)
            #expect(!downloaded.isNotModified && downloaded.data == SampleFiles.standard["small.jpg"])
        }
    }
}
