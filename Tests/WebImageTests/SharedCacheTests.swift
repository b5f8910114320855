import Foundation
import Testing
import WebImage
import WebImageOrigin

/// RFC 9111 § 3.5 for a cache configured as shared (`webimage serve`'s): no `private`
/// responses, and an identity's response only when it says a shared cache may keep it. The
/// default (a private cache, a client's) keeps both, under keys that include the identity.
@Suite("Shared cache: RFC 9111 § 3.5")
struct SharedCacheTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func response(_ cacheControl: String?) -> DataResponse {
        DataResponse(url: URL(string: "https://h/a.png")!, statusCode: 200, headers: cacheControl.map { [HTTPField("Cache-Control", $0)] } ?? [])
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var cacheControl: String?
        var identity: Bool
        var shared: Bool
        var testDescription: String { "\(cacheControl ?? "none") identity:\(identity) shared:\(shared)" }
    }

    static let storedByASharedCache: [Case] = [
        Case(cacheControl: "max-age=60", identity: false, shared: true),
        Case(cacheControl: nil, identity: false, shared: true),
        Case(cacheControl: "public, max-age=60", identity: true, shared: true),
        Case(cacheControl: "s-maxage=60", identity: true, shared: true),
        Case(cacheControl: "max-age=60, must-revalidate", identity: true, shared: true),
    ]
    static let refusedByASharedCache: [Case] = [
        Case(cacheControl: "private, max-age=60", identity: false, shared: true),
        Case(cacheControl: "private=\"Set-Cookie\", max-age=60", identity: false, shared: true),
        Case(cacheControl: "public, private", identity: true, shared: true),
        Case(cacheControl: "max-age=60", identity: true, shared: true),
        Case(cacheControl: nil, identity: true, shared: true),
        Case(cacheControl: "no-store, public", identity: false, shared: true),
    ]
    static let storedByAPrivateCache: [Case] = [
        Case(cacheControl: "private, max-age=60", identity: true, shared: false),
        Case(cacheControl: "max-age=60", identity: true, shared: false),
        Case(cacheControl: nil, identity: true, shared: false),
    ]

    @Test(arguments: storedByASharedCache + storedByAPrivateCache)
    func stored(_ c: Case) {
        let policy = HTTPCachePolicy(isShared: c.shared)
        #expect(policy.metadata(for: response(c.cacheControl), byteCount: 1, now: now, requestHasIdentity: c.identity) != nil)
        #expect(policy.mayStore(response(c.cacheControl), requestHasIdentity: c.identity))
    }

    @Test(arguments: refusedByASharedCache)
    func refused(_ c: Case) {
        let policy = HTTPCachePolicy(isShared: c.shared)
        #expect(policy.metadata(for: response(c.cacheControl), byteCount: 1, now: now, requestHasIdentity: c.identity) == nil)
        #expect(!policy.mayStore(response(c.cacheControl), requestHasIdentity: c.identity))
    }

    @Test func aSharedCacheTakesSMaxAgeAPrivateOneMaxAge() throws {
        let headers = response("max-age=60, s-maxage=600")
        let shared = try #require(HTTPCachePolicy(isShared: true).metadata(for: headers, byteCount: 1, now: now))
        let own = try #require(HTTPCachePolicy().metadata(for: headers, byteCount: 1, now: now))
        #expect(shared.expiresAt == now.addingTimeInterval(600))
        #expect(own.expiresAt == now.addingTimeInterval(60))
    }

    @Test func theLibraryDefaultIsAPrivateCache() {
        #expect(ImagePipeline.Configuration().httpCachePolicy.isShared == false)
    }

    /// Through the pipeline: what a shared cache refuses reaches neither disk nor memory.
    @Test(arguments: [
        ("private, max-age=60", false, false), ("max-age=60", true, false), ("public, max-age=60", true, true),
        ("max-age=60", false, true), ("s-maxage=60", true, true),
    ])
    func aSharedPipelineStoresOnlyWhatTheResponseAllows(cacheControl: String, identity: Bool, stored: Bool) async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let memory = MemoryCache(), data = MemoryDataCache(costLimit: 1 << 20)
            let pipeline = ImagePipeline(configuration: .init(
                memoryCache: memory, memoryDataCache: data, dataCache: try DiskCache(directory: directory),
                httpCachePolicy: HTTPCachePolicy(isShared: true)))
            let allowed = CharacterSet.alphanumerics
            let url = origin.url("/identity/a.png?cc=" + cacheControl.addingPercentEncoding(withAllowedCharacters: allowed)!)
            var request = ImageRequest(url: url).options([.waitStoreCache, .queryMemoryData])
                .context { $0.storePolicy = StorePolicy(original: .all) }
            if identity { request = request.header("Authorization", "Bearer alice") }
            let first = try await pipeline.image(for: request)
            #expect(first.source == .network)
            #expect((await pipeline.cachedData(for: request) != nil) == stored, "disk")
            #expect((pipeline.cachedImage(for: request) != nil) == stored, "memory")
            #expect((data[request.dataKey] != nil) == stored, "memory data")
            let again = try await pipeline.image(for: request)
            #expect((again.source == .network) == !stored)
        }
    }

    /// `webimage serve`'s source cache is shared: a `private` source is fetched again for the
    /// next render (a source with `public` is kept, as before).
    @Test func webimageServeKeepsNoPrivateSource() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withOrigin { origin in
            try await withImageServer(origin: origin, { $0.sourceCacheDirectory = directory }) { harness in
                #expect(harness.server.pipeline.configuration.httpCachePolicy.isShared)
                for (cc, fetches) in [("private, max-age=600", 2), ("public, max-age=600", 1)] {
                    origin.resetCounts()
                    let source = origin.url("/identity/a.png?cc=" + ServerHarness.encode(cc)).absoluteString
                    for width in ["40", "41"] {  // two results: the second needs the source again
                        let reply = try await harness.get(harness.imgPath([("url", source), ("w", width)]))
                        #expect(reply.status == 200)
                    }
                    #expect(origin.requestCount(path: "/identity/a.png") == fetches, "\(cc)")
                }
            }
        }
    }
}
