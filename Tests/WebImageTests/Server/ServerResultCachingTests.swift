import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// A render of a source its origin marked `no-store` or `private` is neither kept by the
    /// server's result caches nor offered to caches in front as `public`.
    @Suite("Image server: the source's Cache-Control restricts who keeps the render")
    struct ServerResultCachingTests {
        @Test func noStoreAndPrivateSourcesAreNotKeptOrSharedAndPublicOnesAre() async throws {
            let directory = temporaryDirectory()
            try await withImageServer({ $0.resultCacheDirectory = directory }) { harness in
                let cases: [(control: String, answer: String, kept: Bool)] = [
                    ("no-store", "no-store", false),
                    ("private, max-age=600", "private, no-cache", false),
                    ("max-age=600", "public, max-age=31536000", true),
                ]
                for (control, answer, kept) in cases {
                    let source = harness.origin.url("/cache/photo.jpg?cc=\(ServerHarness.encode(control))")
                    let path = harness.imgPath([("url", source.absoluteString), ("w", "40")])
                    let first = try await harness.get(path)
                    #expect(first.status == 200 && first.header("cache-control") == answer, "\(control)")
                    #expect(try ImageCoderRegistry.default.decode(first.body).pixelWidth == 40)
                    let second = try await harness.get(path)
                    #expect(second.status == 200 && second.header("cache-control") == answer, "\(control)")
                    #expect(second.header("X-Cache") == (kept ? "hit-memory" : "miss"), "\(control)")
                    // A conditional request is answered with the same restriction.
                    let etag = try #require(second.header("etag"))
                    let conditional = try await harness.get(path, headers: [("If-None-Match", etag)])
                    #expect(conditional.status == 304 && conditional.header("cache-control") == answer, "\(control)")
                    let info = try await harness.get("/info?url=" + ServerHarness.encode(source.absoluteString))
                    #expect(info.status == 200 && info.header("cache-control") == answer, "\(control): /info")
                }
            }
            // Nothing of the restricted renders is on disk: one entry, the public one's.
            #expect(await DiskCache.statistics(of: directory).count == 1)
        }
    }
}
