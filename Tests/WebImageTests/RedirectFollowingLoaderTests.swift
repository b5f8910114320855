import Foundation
import Testing
import WebImage
import WebImageOrigin

/// ``RedirectFollowingLoader`` against two real loopback origins: every hop is shown to the check
/// first, credentials stay with their origin, loops and long chains end, and the response names
/// the last hop.
@Suite("A loader that follows redirects itself")
struct RedirectFollowingLoaderTests {
    struct Refused: Error, PermanentlyFailing {}

    static func load(_ loader: RedirectFollowingLoader, _ url: URL, headers: [HTTPField] = []) async throws -> (DataResponse, Data) {
        let transfer = try await loader.loadData(for: DataRequest(url: url, headers: headers, timeout: .seconds(60)))
        var data = Data()
        for try await chunk in transfer.body { data.append(chunk) }
        return (transfer.response, data)
    }

    @Test func everyHopIsCheckedAndCredentialsStayWithTheirOrigin() async throws {
        try await withOrigin { first in
            try await withOrigin { second in
                let target = second.imageURL("logo.png")
                let hops = Locked<[URL]>([])
                let loader = RedirectFollowingLoader(base: HTTPDataLoader(maxRedirects: 0)) { next in hops.withLock { $0.append(next) } }
                let secret = [HTTPField("Authorization", "Bearer first-only"), HTTPField("Cookie", "session=1"), HTTPField("Accept", "image/png")]
                // The same origin keeps the credentials: /redirect/2/small.jpg → /redirect/1/small.jpg → the image.
                let (same, sameData) = try await Self.load(loader, first.url("/redirect/2/small.jpg"), headers: secret)
                #expect(same.statusCode == 200 && same.url == first.imageURL("small.jpg") && sameData == SampleFiles.standard["small.jpg"])
                #expect(first.requests.filter { $0.path == "/images/small.jpg" }.last?.headers["authorization"] == "Bearer first-only")
                // Another origin gets neither Authorization nor Cookie; other headers go on.
                let encoded = target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let (other, otherData) = try await Self.load(loader, first.url("/redirect-to?location=" + encoded), headers: secret)
                #expect(other.statusCode == 200 && other.url == target && otherData == SampleFiles.standard["logo.png"])
                let arrived = try #require(second.requests.last { $0.path == "/images/logo.png" })
                #expect(arrived.headers["authorization"] == nil && arrived.headers["cookie"] == nil && arrived.headers["accept"] == "image/png", "\(arrived.headers)")
                let seen = hops.withLock { $0 }
                #expect(seen == [first.url("/redirect/1/small.jpg"), first.imageURL("small.jpg"), target])
            }
        }
    }

    @Test func aRefusedHopIsNeverRequestedAndLoopsAndLongChainsEnd() async throws {
        try await withOrigin { origin in
            let refusing = RedirectFollowingLoader(base: HTTPDataLoader(maxRedirects: 0)) { next in
                if next.path.hasPrefix("/images/") { throw Refused() }
            }
            await #expect(throws: Refused.self) { _ = try await Self.load(refusing, origin.url("/redirect/1/small.jpg")) }
            #expect(origin.requestCount(path: "/images/small.jpg") == 0)
            // Only http and https: a hop to AsyncHTTPClient's `http+unix` would reach a local socket.
            let plain = RedirectFollowingLoader(base: HTTPDataLoader(maxRedirects: 0))
            let socket = "http+unix://%2Ftmp%2Fnone.sock/x.png"
            await #expect(throws: ImageDownloadError.invalidURL(socket)) {
                _ = try await Self.load(plain, origin.url("/redirect-to?location=" + socket.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
            }
            let short = RedirectFollowingLoader(base: HTTPDataLoader(maxRedirects: 0), maxRedirects: 2)
            await #expect(throws: ImageDownloadError.tooManyRedirects) { _ = try await Self.load(short, origin.url("/redirect/3/small.jpg")) }
            await #expect(throws: ImageDownloadError.tooManyRedirects) { _ = try await Self.load(short, origin.url("/redirect/loop")) }
            #expect(origin.requestCount(path: "/redirect/loop") == 1, "a loop ends when it comes back, not at the limit")
            let (withinTheLimit, _) = try await Self.load(short, origin.url("/redirect/2/small.jpg"))
            #expect(withinTheLimit.statusCode == 200)
        }
    }
}
