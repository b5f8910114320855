import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// Issue 26's allow-list and cache-key reproductions against a real `webimage serve` process
    /// (the in-process suites, `ServerAllowListTests` and `ServerKeyTests`, cover every variant
    /// with a resolver hook). Everything is on 127.0.0.0/8: the "other host" is 127.0.0.2.
    @Suite("webimage serve: allow-list and cache keys (process)")
    struct ServeProcessAttackTests {
        static func get(_ url: String, client: HTTPClient) async throws -> (status: Int, etag: String?, body: Data) {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            let body = Data(buffer: try await response.body.collect(upTo: 10 << 20))
            return (Int(response.status.code), response.headers.first(name: "etag"), body)
        }

        @Test func theUserinfoTrickAPrefixThatIsNotAPathAndASmuggledWidthFailSafely() async throws {
            try await withOrigin { origin in
                let allowed = "http://127.0.0.1:\(origin.port)/images/"
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--allow-source", allowed], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)/img?url="
                func source(_ url: String) -> String { base + ServerHarness.encode(url) }
                // `allowed-host:port@other-host`: the host is 127.0.0.2, the allowed part only userinfo.
                let trick = "http://127.0.0.1:\(origin.port)@127.0.0.2:\(origin.port)/images/photo.jpg"
                #expect(try await Self.get(source(trick) + "&w=10", client: client).status == 400)
                // A path that only shares the prefix's characters, not its segment.
                #expect(try await Self.get(source("http://127.0.0.1:\(origin.port)/images-private/photo.jpg") + "&w=10", client: client).status == 403)
                // Case and the default-free port written out are the same source.
                #expect(try await Self.get(source("HTTP://127.0.0.1:\(origin.port)/images/photo.jpg") + "&w=10", client: client).status == 200)
                #expect(origin.requests.allSatisfy { $0.path.hasPrefix("/images/") }, "nothing outside the list was fetched")
                // A source URL ending in `&w=4` is not the request with `w=4`.
                let smuggled = try await Self.get(source("http://127.0.0.1:\(origin.port)/images/photo.jpg?a&w=4"), client: client)
                let real = try await Self.get(source("http://127.0.0.1:\(origin.port)/images/photo.jpg?a") + "&w=4", client: client)
                #expect(smuggled.status == 200 && real.status == 200)
                #expect(smuggled.etag != nil && smuggled.etag != real.etag)
                #expect(try ImageCoderRegistry.default.decode(real.body).pixelWidth == 4)
                #expect(try ImageCoderRegistry.default.decode(smuggled.body).pixelWidth != 4)
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }

        /// Every hop of a redirect is checked against the list in the real process: another host,
        /// another port, another scheme and the userinfo trick are refused with 403 before any
        /// connection (the other host, 127.0.0.2, has no server: a followed hop would be a 502).
        @Test func redirectsOutOfTheListAreRefused() async throws {
            try await withOrigin { origin in
                let allowed = "http://127.0.0.1:\(origin.port)/"
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--allow-source", allowed], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                func redirect(to target: String) -> String {
                    let hop = "http://127.0.0.1:\(origin.port)/redirect-to?location=" + ServerHarness.encode(target)
                    return "http://127.0.0.1:\(serve.port)/img?w=10&url=" + ServerHarness.encode(hop)
                }
                let outside = [
                    "http://127.0.0.2:\(origin.port)/images/photo.jpg", "http://127.0.0.1:\(serve.port)/health",
                    "https://127.0.0.1:\(origin.port)/images/photo.jpg", "http://127.0.0.1:\(origin.port)@127.0.0.2:\(origin.port)/images/photo.jpg",
                    "http://localhost:\(origin.port)/images/photo.jpg",
                ]
                for target in outside {
                    let reply = try await Self.get(redirect(to: target), client: client)
                    #expect(reply.status == 403, "\(target)")
                    #expect(String(decoding: reply.body, as: UTF8.self).contains("source_not_allowed"), "\(target)")
                }
                let inside = try await Self.get(redirect(to: "http://127.0.0.1:\(origin.port)/images/photo.jpg"), client: client)
                #expect(inside.status == 200, "a hop inside the list is followed")
                #expect(try ImageCoderRegistry.default.decode(inside.body).pixelWidth == 10)
                #expect(origin.requests.filter { $0.path.hasPrefix("/images/") }.count == 1, "only the allowed hop reached an image")
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
