#if Vapor
import AsyncHTTPClient
import Foundation
import Testing
import Vapor
import WebImage
import WebImageOrigin
import WebImageServer
import WebImageVapor

extension ServerTests {
    /// The image server's routes in a real Vapor 4 app (issue 29), on 127.0.0.1 and an ephemeral
    /// port, mounted under a route group: the same answers as under `webimage serve`.
    @Suite("Image server: routes in a Vapor app")
    struct VaporRoutesTests {
        static let key = "vapor-secret"

        @Test func aVaporAppAnswersEveryRoute() async throws {
            try await Self.withVaporApp { harness in
                let source = harness.origin.imageURL("logo.png").absoluteString
                // A signed /img: the signature covers the path Vapor received, group included.
                let signer = URLSigner(keys: [Data(Self.key.utf8)])
                let image = try await harness.get(signer.sign("/images" + harness.imgPath([("url", source), ("w", "32"), ("format", "png")])))
                #expect(image.status == 200 && image.header("content-type") == "image/png", "\(String(decoding: image.body.prefix(200), as: UTF8.self))")
                let decoded = try ImageCoderRegistry.default.decode(image.body)
                #expect(decoded.pixelWidth == 32 && image.header("etag") != nil)
                #expect(image.header("content-length") == String(image.body.count))
                // The validator answers 304, as under Hummingbird.
                let again = try await harness.get(
                    signer.sign("/images" + harness.imgPath([("url", source), ("w", "32"), ("format", "png")])),
                    headers: [("If-None-Match", image.header("etag") ?? "")])
                #expect(again.status == 304 && again.body.isEmpty)
                // Unsigned: refused with the server's JSON error.
                ServerErrorTests.expectError(try await harness.get("/images" + harness.imgPath([("url", source), ("w", "32")])), 403, "bad_signature")
                // /info, signed like /img.
                let info = try await harness.get(signer.sign("/images/info?url=\(ServerHarness.encode(source))"))
                let fields = try JSONSerialization.jsonObject(with: info.body) as? [String: Any]
                #expect(info.status == 200 && fields?["format"] as? String == "png", "\(String(decoding: info.body, as: UTF8.self))")
                // Health, readiness and metrics need no signature.
                let health = try await harness.get("/images/health")
                #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self) == "ok\n")
                #expect(try await harness.get("/images/ready").status == 200)
                let metrics = String(decoding: try await harness.get("/images/metrics").body, as: UTF8.self)
                #expect(metrics.contains(#"webimage_server_requests_total{status="200"}"#), "\(metrics.prefix(300))")
            }
        }

        /// `ServerHarness` over a Vapor app holding the server's routes under `/images`.
        static func withVaporApp(_ body: (ServerHarness) async throws -> Void) async throws {
            try await withOrigin(files: ["logo.png": SampleFiles.standard["logo.png"]!]) { origin in
                var configuration = ImageServerConfiguration()
                configuration.allowPrivateNetworks = true
                configuration.signingKeys = [Data(key.utf8)]
                configuration.fetchTimeout = .seconds(60)
                configuration.processingTimeout = .seconds(120)
                let server = try ImageServer(configuration: configuration, logger: quietLogger)
                let app = try await Application.make(.testing)
                app.logger.logLevel = .critical
                app.http.server.configuration.hostname = "127.0.0.1"
                app.http.server.configuration.port = 0
                server.addRoutes(to: app.grouped("images"))
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
                do {
                    let port = try #require(app.http.server.shared.localAddress?.port)
                    try await body(ServerHarness(server: server, origin: origin, port: port, client: client))
                } catch {
                    try? await client.shutdown()
                    await app.server.shutdown()
                    try? await app.asyncShutdown()
                    throw error
                }
                try await client.shutdown()
                await app.server.shutdown()
                try await app.asyncShutdown()
            }
        }
    }
}
#endif
