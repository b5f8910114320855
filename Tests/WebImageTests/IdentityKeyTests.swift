import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The keys behind identity isolation: what goes into them (a digest, never a secret), that a
/// request without identity keeps its plain keys, and that no URL, key override or processor
/// identifier can spell another request's key.
@Suite("Identity keys: digests, separators, no forgery")
struct IdentityKeyTests {
    struct Named: ImageProcessing {
        let identifier: String
        func process(_ image: Image) throws(ImageProcessingError) -> Image { image }
    }

    @Test func aRequestWithoutIdentityKeepsItsPlainKeys() {
        let url = URL(string: "https://h/a.png?x=1")!
        let plain = ImageRequest(url: url).priority(.high).header("Accept", "image/png")
        #expect(plain.identity == nil)
        #expect(plain.dataKey == url.absoluteString && plain.imageKey == url.absoluteString)
    }

    @Test func identityKeysHoldADigestNotTheSecret() throws {
        let url = URL(string: "https://h/a.png")!
        let bearer = ImageRequest(url: url).header("Authorization", "Bearer s3cr3t-token")
        let cookie = ImageRequest(url: url).header("cookie", "session=s3cr3t-token")
        let basic = ImageRequest(url: url).credentials(Credentials(user: "me", password: "s3cr3t-token"))
        for request in [bearer, cookie, basic] {
            let identity = try #require(request.identity)
            #expect(identity.count == 64 && identity.allSatisfy(\.isHexDigit))
            #expect(!request.dataKey.contains("s3cr3t") && !request.imageKey.contains("s3cr3t"))
            #expect(request.dataKey.hasPrefix(url.absoluteString) && request.dataKey != url.absoluteString)
        }
        #expect(Set([bearer.dataKey, cookie.dataKey, basic.dataKey]).count == 3)
        // The same identity is the same key, whatever the header order or name case.
        let twoHeaders = ImageRequest(url: url).header("Authorization", "Bearer a").header("Cookie", "s=1")
        let swapped = ImageRequest(url: url).header("cookie", "s=1").header("authorization", "Bearer a")
        #expect(twoHeaders.dataKey == swapped.dataKey)
        // Priority changes do not touch it.
        #expect(bearer.priority(.veryHigh).dataKey == bearer.dataKey)
    }

    @Test func aFragmentCannotNameAnotherRequestsVariant() {
        let base = "https://h/a.png"
        let variants: [ImageRequest] = [
            ImageRequest(url: URL(string: base)!).thumbnail(maxPixelSize: 256),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "x")]),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "a|b")]),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "a"), Named(identifier: "b")]),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "1:a")]),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "1"), Named(identifier: "a")]),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "x;animated")]),
            ImageRequest(url: URL(string: base)!).processed(by: [Named(identifier: "x")]).options(.transformAnimatedImage),
        ]
        // URLs spelled like the old keys (`#` separator, `|` and `;` in the list) and like the new
        // ones (the control separators, which a URL percent-encodes).
        var forgeries: [ImageRequest] = []
        for request in variants {
            let suffix = String(request.imageKey.dropFirst(base.count))
            for spelling in [suffix, "#" + suffix.dropFirst(), "#thumb=256", "#p=x", "#p=a|b", "#p=1:a"] {
                if let url = URL(string: base + spelling) { forgeries.append(ImageRequest(url: url)) }
            }
        }
        forgeries.append(ImageRequest(url: URL(string: base)!, cacheKey: variants[0].imageKey))
        forgeries.append(ImageRequest(url: URL(string: base)!, cacheKey: base + "\u{1E}thumb=256"))
        let keys = variants.map(\.imageKey) + forgeries.map(\.imageKey)
        #expect(Set(variants.map(\.imageKey)).count == variants.count, "every variant has its own key")
        for forgery in forgeries {
            #expect(!variants.map(\.imageKey).contains(forgery.imageKey), "\(forgery.url.absoluteString) forges no variant key")
        }
        #expect(keys.count > 20)
        // A URL's absoluteString never holds a separator: Foundation percent-encodes them.
        for scalar in ["\u{1C}", "\u{1D}", "\u{1E}", "\u{1F}"] {
            if let url = URL(string: base + scalar + "x") { #expect(!url.absoluteString.contains(scalar)) }
        }
    }

    @Test func anOverrideCannotForgeAnIdentitysKey() throws {
        let url = URL(string: "https://h/a.png")!
        let alice = ImageRequest(url: url).header("Authorization", "Bearer alice")
        let identity = try #require(alice.identity)
        for spelled in [url.absoluteString + "\u{1F}" + identity, url.absoluteString + "#" + identity, url.absoluteString + " #" + identity] {
            let forged = ImageRequest(url: url, cacheKey: spelled)
            #expect(forged.dataKey != alice.dataKey && forged.imageKey != alice.imageKey)
        }
        // And the escaping keeps different overrides different.
        let a = ImageRequest(url: url, cacheKey: "k\u{1D}a"), b = ImageRequest(url: url, cacheKey: "k\u{1C}")
        #expect(a.dataKey != b.dataKey)
    }

    @Test func aFragmentURLLoadsItsOwnImageNotACachedVariant() async throws {
        try await withOrigin { origin in
            let memory = MemoryCache()
            let pipeline = ImagePipeline(configuration: .init(memoryCache: memory))
            let url = origin.imageURL("photo.jpg")
            let thumbnail = try await pipeline.image(for: ImageRequest(url: url).thumbnail(maxPixelSize: 64))
            #expect(max(thumbnail.image.pixelWidth, thumbnail.image.pixelHeight) <= 64)
            // The URL the old `#` separator made equal to the thumbnail's key.
            let forged = URL(string: url.absoluteString + "#thumb=64")!
            #expect(pipeline.cachedImage(for: forged) == nil)
            let full = try await pipeline.image(for: forged)
            #expect(full.source == .network && full.image.pixelWidth > 64)
        }
    }

    /// Why the disk cache never leaked: its entries are named by the data key, and an identity's
    /// data key is not the URL; the URL's own key stays empty.
    @Test func theDiskCacheNamesAnIdentitysEntryByItsDigest() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: try DiskCache(directory: directory)))
            let url = origin.url("/identity/a.png")
            let alice = ImageRequest(url: url).header("Authorization", "Bearer alice").options(.waitStoreCache)
            _ = try await pipeline.image(for: alice)
            let disk = try DiskCache(directory: directory)
            let stored = try #require(await disk.data(for: alice.dataKey))
            #expect(stored == (try IdentityImages.png(for: IdentityImages.identity(authorization: "Bearer alice"))))
            #expect(await disk.data(for: url.absoluteString) == nil, "nothing under the plain URL")
            #expect(await pipeline.cachedData(for: ImageRequest(url: url)) == nil)
        }
    }

    @Test func cookiesFromTheJarAreAnIdentityToo() async throws {
        try await withOrigin { origin in
            var download = ImageDownloaderConfiguration()
            download.handlesCookies = true
            let downloader = ImageDownloader(configuration: download)
            let pipeline = ImagePipeline(configuration: .init(downloader: downloader, memoryCache: MemoryCache()))
            let url = origin.url("/identity/a.png")
            downloader.cookies.store(setCookie: ["session=alice; Path=/"], from: url)
            let alice = try await pipeline.image(for: url)
            #expect(alice.image.pixelWidth == IdentityImages.size(for: IdentityImages.identity(cookie: "session=alice")).width)
            #expect(try await pipeline.image(for: url).source == .memory, "the same jar, the same identity")
            // Signed out: the jar's cookie is gone, and so is access to alice's image.
            downloader.cookies.removeAll()
            #expect(pipeline.cachedImage(for: url) == nil)
            let signedOut = try await pipeline.image(for: url)
            #expect(signedOut.source == .network)
            #expect(signedOut.image.pixelWidth == IdentityImages.size(for: IdentityImages.identity()).width)
            // Another user signs in.
            downloader.cookies.store(setCookie: ["session=bob; Path=/"], from: url)
            let bob = try await pipeline.image(for: ImageRequest(url: url))
            #expect(bob.source == .network)
            #expect(bob.image.pixelWidth == IdentityImages.size(for: IdentityImages.identity(cookie: "session=bob")).width)
        }
    }

    @Test func globalCredentialsAreAnIdentity() async throws {
        try await withOrigin { origin in
            let downloader = ImageDownloader()
            let pipeline = ImagePipeline(configuration: .init(downloader: downloader, memoryCache: MemoryCache()))
            let url = origin.url("/identity/a.png?challenge=1")
            downloader.setCredentials(Credentials(user: "alice", password: "pw"))
            let alice = try await pipeline.image(for: url)
            #expect(alice.image.pixelWidth == IdentityImages.size(for: IdentityImages.identity(
                authorization: Credentials(user: "alice", password: "pw").basicAuthorization)).width)
            downloader.setCredentials(Credentials(user: "bob", password: "pw"))
            let bob = try await pipeline.image(for: url)
            #expect(bob.source == .network)
            #expect(bob.image.pixelWidth == IdentityImages.size(for: IdentityImages.identity(
                authorization: Credentials(user: "bob", password: "pw").basicAuthorization)).width)
        }
    }
}
