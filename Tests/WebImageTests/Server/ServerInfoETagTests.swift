import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `/info`'s strong ETag and `304` for a matching `If-None-Match`, as `/img` has, through a
    /// real, signing `webimage serve` process in front of a real origin: the tag changes with the
    /// source's bytes and with `bh`, and a 304 has no body.
    @Suite("GET /info: ETag and If-None-Match (process)")
    struct ServerInfoETagTests {
        @Test func infoHasAnETagAndAnswers304WhenItMatches() async throws {
            try await withOrigin(files: SampleFiles.standard) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60"],
                    environment: ["WEBIMAGE_KEY": ServerInfoTests.key, "WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                func info(_ name: String, _ extra: String = "", ifNoneMatch: String? = nil) async throws -> (status: Int, etag: String?, body: Data) {
                    let path = "/info?url=\(ServerHarness.encode(origin.imageURL(name).absoluteString))\(extra)"
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(serve.port)" + ServerInfoTests.signer.sign(path))
                    if let ifNoneMatch { request.headers.add(name: "If-None-Match", value: ifNoneMatch) }
                    let response = try await client.execute(request, timeout: .seconds(60))
                    let body = Data(buffer: try await response.body.collect(upTo: 1 << 20))
                    return (Int(response.status.code), response.headers.first(name: "etag"), body)
                }

                let first = try await info("photo.jpg")
                let etag = try #require(first.etag)
                #expect(first.status == 200 && etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34, "\(etag)")
                #expect(try await info("photo.jpg").etag == etag, "the same source and parameters, the same tag")
                // A matching tag (also weak, in a list, or *) is a 304 without a body, with the tag.
                for header in [etag, "W/" + etag, "\"nope\", " + etag, "*"] {
                    let again = try await info("photo.jpg", ifNoneMatch: header)
                    #expect(again.status == 304 && again.body.isEmpty && again.etag == etag, "\(header): \(again.status)")
                }
                let stale = try await info("photo.jpg", ifNoneMatch: "\"0123\"")
                #expect(stale.status == 200 && stale.body == first.body)
                // Another source, or other BlurHash components: another tag, and no 304 for the old one.
                let other = try await info("landscape.jpg", ifNoneMatch: etag)
                #expect(other.status == 200 && other.etag != nil && other.etag != etag)
                let components = try await info("photo.jpg", "&bh=5:4", ifNoneMatch: etag)
                #expect(components.status == 200 && components.etag != nil && components.etag != etag)
                // An /img tag of the same source is not an /info tag.
                let imgPath = ServerInfoTests.signer.sign("/img?url=\(ServerHarness.encode(origin.imageURL("photo.jpg").absoluteString))")
                let img = try await ServeProcessAttackTests.get("http://127.0.0.1:\(serve.port)" + imgPath, client: client)
                #expect(img.status == 200 && img.etag != nil && img.etag != etag)

                try await client.shutdown()
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }
    }
}
