import Foundation
import Testing
import WebImage
import WebImageOrigin

/// No caller receives another identity's bytes: in flight, from the memory cache, from the disk
/// cache or through the look-up cache — for `Authorization`, a cookie, credentials and a custom
/// header declared identity-bearing. The origin answers each identity with its own image
/// (``IdentityImages``), so a caller can tell whose image it got.
@Suite("Identity isolation: work and caches shared only within one identity")
struct IdentityIsolationTests {
    enum Place: String, CaseIterable, Sendable { case inFlight, memory, disk, lookup }

    enum Kind: String, CaseIterable, Sendable {
        case authorization, cookie, credentials, customHeader

        /// The request of user `name`, and the identity the origin sees for it.
        func caller(_ name: String, url: URL) -> (request: ImageRequest, identity: String) {
            let request = ImageRequest(url: url)
            switch self {
            case .authorization:
                return (request.header("Authorization", "Bearer \(name)"), IdentityImages.identity(authorization: "Bearer \(name)"))
            case .cookie:
                return (request.header("Cookie", "session=\(name)"), IdentityImages.identity(cookie: "session=\(name)"))
            case .credentials:
                let credentials = Credentials(user: name, password: "pw-\(name)")
                return (request.credentials(credentials), IdentityImages.identity(authorization: credentials.basicAuthorization))
            case .customHeader:
                return (request.header("X-Tenant", name), IdentityImages.identity(tenant: name))
            }
        }

        /// Requests the origin sees before it answers with the image (a `401` first for credentials).
        var arrivalsPerLoad: Int { self == .credentials ? 2 : 1 }
    }

    /// The pipeline that can reuse only through `place`.
    static func pipeline(for place: Place, origin: ImageOrigin) throws -> ImagePipeline {
        var download = ImageDownloaderConfiguration()
        download.resolvers = [LookupResolver { $0.path.hasPrefix("/identity-lookup/") }]
        return ImagePipeline(configuration: .init(
            downloader: ImageDownloader(configuration: download),
            memoryCache: place == .memory ? MemoryCache() : nil,
            dataCache: place == .disk ? try DiskCache(directory: temporaryDirectory()) : nil,
            identity: .headers(["X-Tenant"])))
    }

    static func path(for place: Place) -> String { place == .lookup ? "/identity-lookup/a.png" : "/identity/a.png" }

    /// Loads `first`, then `second` — while the first is held at the origin (in flight), or after it.
    static func load(
        _ first: ImageRequest, then second: ImageRequest, at place: Place, kind: Kind, origin: ImageOrigin, pipeline: ImagePipeline
    ) async throws -> (ImageResponse, ImageResponse) {
        guard place == .inFlight else {
            let a = try await pipeline.image(for: first.options(.waitStoreCache))
            let b = try await pipeline.image(for: second.options(.waitStoreCache))
            return (a, b)
        }
        let a = Task { try await pipeline.image(for: first) }
        // The second caller comes while the first one's answer is held at the origin.
        let deadline = ContinuousClock.now + .seconds(10)
        while origin.requestCount(path: path(for: place)) < kind.arrivalsPerLoad, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let b = try await pipeline.image(for: second)
        return (try await a.value, b)
    }

    static func url(for place: Place, kind: Kind, origin: ImageOrigin) -> URL {
        var query = kind == .credentials ? ["challenge=1"] : []
        if place == .inFlight { query.append("delay=800") }
        return origin.url(path(for: place) + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
    }

    /// What the origin answered with an image (look-ups: the look-up answers).
    static func answers(_ origin: ImageOrigin, place: Place) -> Int {
        origin.requests.filter { $0.path == path(for: place) && $0.status == 200 }.count
    }

    static func expectImage(_ response: ImageResponse, of identity: String, _ comment: Comment) {
        let size = IdentityImages.size(for: identity)
        #expect(response.image.pixelWidth == size.width && response.image.pixelHeight == size.height, comment)
    }

    @Test(arguments: Place.allCases, Kind.allCases)
    func theSameIdentityShares(place: Place, kind: Kind) async throws {
        try await withOrigin { origin in
            let pipeline = try Self.pipeline(for: place, origin: origin)
            let url = Self.url(for: place, kind: kind, origin: origin)
            let first = kind.caller("alice", url: url), second = kind.caller("alice", url: url)
            let (a, b) = try await Self.load(first.request, then: second.request, at: place, kind: kind, origin: origin, pipeline: pipeline)
            Self.expectImage(a, of: first.identity, "the first caller gets its own image")
            Self.expectImage(b, of: first.identity, "the second caller, the same identity, gets the same image")
            #expect(Self.answers(origin, place: place) == 1, "one answer served both: \(place), \(kind)")
            switch place {
            case .memory: #expect(b.source == .memory)
            case .disk: #expect(b.source == .disk)
            case .inFlight, .lookup: break
            }
        }
    }

    @Test(arguments: Place.allCases, Kind.allCases)
    func anotherIdentityDoesNotShare(place: Place, kind: Kind) async throws {
        try await withOrigin { origin in
            let pipeline = try Self.pipeline(for: place, origin: origin)
            let url = Self.url(for: place, kind: kind, origin: origin)
            let alice = kind.caller("alice", url: url), bob = kind.caller("bob", url: url)
            #expect(IdentityImages.size(for: alice.identity) != IdentityImages.size(for: bob.identity), "the test can tell them apart")
            let (a, b) = try await Self.load(alice.request, then: bob.request, at: place, kind: kind, origin: origin, pipeline: pipeline)
            Self.expectImage(a, of: alice.identity, "alice gets alice's image")
            Self.expectImage(b, of: bob.identity, "bob never gets alice's image: \(place), \(kind)")
            #expect(
                Self.answers(origin, place: place) == 2,
                "each identity was answered on its own: \(origin.requests.map { "\($0.status) \($0.headers["authorization"] ?? "-")" })")
            #expect(b.source == .network)
        }
    }

    @Test(arguments: Place.allCases)
    func aCallerWithoutIdentityNeverGetsAnIdentitysImage(place: Place) async throws {
        try await withOrigin { origin in
            let pipeline = try Self.pipeline(for: place, origin: origin)
            let url = Self.url(for: place, kind: .authorization, origin: origin)
            let alice = Kind.authorization.caller("alice", url: url)
            let anonymous = IdentityImages.identity()
            let (a, b) = try await Self.load(alice.request, then: ImageRequest(url: url), at: place, kind: .authorization, origin: origin, pipeline: pipeline)
            Self.expectImage(a, of: alice.identity, "alice gets alice's image")
            Self.expectImage(b, of: anonymous, "a caller without credentials gets the anonymous image")
            // The plain-URL entry point too (its memory fast path).
            let plain = try await pipeline.image(for: url)
            Self.expectImage(plain, of: anonymous, "image(for: url) gets the anonymous image")
        }
    }

    /// A caller's own downloader whose request modifier adds its token: the key is made before
    /// the modifier runs, so the answer is kept nowhere a caller of the same URL without that
    /// downloader would find it — memory, disk or the plain-URL fast path (found by reading,
    /// stop 49: alice's image was stored under the plain URL and served to anyone).
    @Test(arguments: [Place.memory, Place.disk])
    func aModifiersIdentityThroughACallersOwnDownloaderIsKeptFromOthers(place: Place) async throws {
        try await withOrigin { origin in
            let pipeline = try Self.pipeline(for: place, origin: origin)
            let url = Self.url(for: place, kind: .authorization, origin: origin)
            var configuration = ImageDownloaderConfiguration()
            configuration.requestModifier = { request in
                var request = request
                request.headers.append(HTTPField("Authorization", "Bearer alice"))
                return request
            }
            var alice = ImageRequest(url: url).options(.waitStoreCache)
            alice.context.downloader = ImageDownloader(configuration: configuration)
            Self.expectImage(try await pipeline.image(for: alice), of: IdentityImages.identity(authorization: "Bearer alice"), "alice gets hers")
            let anonymous = IdentityImages.identity()
            let plain = try await pipeline.image(for: ImageRequest(url: url))
            Self.expectImage(plain, of: anonymous, "\(place): a caller without the downloader gets the anonymous image")
            #expect(plain.source == .network)
            Self.expectImage(try await pipeline.image(for: url), of: anonymous, "image(for: url) too")
        }
    }

    /// A URL's own user and password (`http://alice:pw@host/…`) answer the origin's challenge as
    /// credentials and are the caller's identity: a caller of the plain URL is challenged, not
    /// served her cached image, and the password is written nowhere in the disk cache (red team, stop 49: it was
    /// not sent, yet stored in clear text in the cache index).
    @Test func aURLsUserAndPasswordAreCredentialsNotPartOfTheURL() async throws {
        try await withOrigin { origin in
            let directory = try temporaryDirectory()
            let pipeline = ImagePipeline(configuration: .init(
                memoryCache: MemoryCache(), dataCache: try DiskCache(directory: directory), identity: .standard))
            let url = Self.url(for: .disk, kind: .credentials, origin: origin)
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.user = "alice"
            components.password = "pw-secret"
            let withUser = try #require(components.url)
            let request = ImageRequest(url: withUser)
            #expect(request.url == url && request.download.credentials == Credentials(user: "alice", password: "pw-secret"))
            let alice = IdentityImages.identity(authorization: Credentials(user: "alice", password: "pw-secret").basicAuthorization)
            Self.expectImage(try await pipeline.image(for: request.options(.waitStoreCache)), of: alice, "the URL's user gets her image")
            Self.expectImage(try await pipeline.image(for: withUser), of: alice, "image(for: url) too")
            // The origin challenges a caller without credentials: the plain URL is refused, not
            // answered from alice's cached image.
            await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: ImageRequest(url: url).options(.waitStoreCache)) }
            await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: url) }
            // Nothing the cache wrote holds the password.
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            #expect(!files.isEmpty)
            for file in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                let bytes = try Data(contentsOf: file)
                #expect(bytes.firstRange(of: Data("pw-secret".utf8)) == nil, "\(file.lastPathComponent) holds the password")
            }
        }
    }
}
