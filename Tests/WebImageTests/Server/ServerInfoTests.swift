import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `GET /info` through a real `webimage serve` process in front of a real origin on 127.0.0.1:
    /// signed like `/img`, the same fetch and limits, JSON that matches the library's own hashes.
    @Suite("GET /info (process)")
    struct ServerInfoTests {
        struct Info: Decodable {
            var format: String, width: Int, height: Int, frames: Int, hasAlpha: Bool
            var colorProfile: String?, averageColor: String, blurHash: String, thumbHash: String
        }

        static let key = "info-test-key"
        static let signer = URLSigner(keys: [Data(key.utf8)])

        static var files: [String: Data] {
            var files = SampleFiles.standard
            files["huge.png"] = PNGBomb.header(width: 100_000, height: 100_000)  // 40 GB of RGBA if decoded
            files["notes.txt"] = Data("these are notes, not an image\n".utf8)
            files["adobe-rgb.jpg"] = try? ColorManagementTests.load("adobe-rgb.jpg")
            return files
        }

        /// What `/info` must say about `data`, computed with the library as the server decodes.
        static func expected(_ data: Data, components: (x: Int, y: Int)) throws -> (blurHash: String, thumbHash: String, average: String) {
            var options = ImageDecodingOptions(maxPixelCount: 100_000_000, firstFrameOnly: true)
            options.thumbnailMaxPixelSize = 100
            let image = try ImageCoderRegistry.default.decode(data, options: options)
            return (try image.blurHash(components: components).string, try image.thumbHash().base64String,
                    "#" + String(try image.averageColor().hex.prefix(6)))
        }

        @Test func infoDescribesSourcesAndRefusesHostileOnes() async throws {
            let files = Self.files
            try await withOrigin(files: files) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60"],
                    environment: ["WEBIMAGE_KEY": Self.key, "WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                func info(_ name: String, _ extra: String = "", signed: Bool = true) async throws -> (status: Int, body: Data) {
                    let path = "/info?url=\(ServerHarness.encode(origin.imageURL(name).absoluteString))\(extra)"
                    let result = try await ServeProcessAttackTests.get(base + (signed ? Self.signer.sign(path) : path), client: client)
                    return (result.status, result.body)
                }
                func code(_ body: Data) -> String? { (try? JSONDecoder().decode([String: String].self, from: body))?["error"] }

                // Unsigned, or signed for /img: refused.
                #expect(try await info("photo.jpg", signed: false).status == 403)
                let imgSigned = Self.signer.sign("/img?url=\(ServerHarness.encode(origin.imageURL("photo.jpg").absoluteString))")
                let swapped = try await ServeProcessAttackTests.get(base + imgSigned.replacingOccurrences(of: "/img?", with: "/info?"), client: client)
                #expect(swapped.status == 403 && code(swapped.body) == "bad_signature")

                // Described as the library describes it: sizes from the header, hashes of the same pixels.
                for (name, format, width, height, frames) in [
                    ("photo.jpg", "jpeg", 1000, 1000, 1), ("landscape.jpg", "jpeg", 1600, 900, 1), ("logo.png", "png", 256, 256, 1),
                    ("badge.webp", "webp", 128, 128, 1), ("bounce.png", "apng", 120, 90, 5),
                ] {
                    let reply = try await info(name)
                    try #require(reply.status == 200, "\(name): \(String(decoding: reply.body, as: UTF8.self))")
                    let described = try JSONDecoder().decode(Info.self, from: reply.body)
                    #expect(described.format == format && described.width == width && described.height == height && described.frames == frames,
                            "\(name): \(String(decoding: reply.body, as: UTF8.self))")
                    let expected = try Self.expected(files[name]!, components: (4, 3))
                    #expect(described.blurHash == expected.blurHash, "\(name)")
                    #expect(described.thumbHash == expected.thumbHash, "\(name)")
                    #expect(described.averageColor == expected.average, "\(name)")
                    #expect(try BlurHash(described.blurHash).components == (4, 3))
                    #expect(try ThumbHash(base64: described.thumbHash).bytes.count >= 5)
                }
                let alpha = try JSONDecoder().decode(Info.self, from: try await info("badge.webp").body)
                #expect(alpha.hasAlpha)
                let tagged = try JSONDecoder().decode(Info.self, from: try await info("adobe-rgb.jpg").body)
                #expect(tagged.colorProfile?.contains("Adobe RGB") == true, "\(tagged.colorProfile ?? "none")")

                // bh= chooses the components, checked like every parameter.
                let nine = try JSONDecoder().decode(Info.self, from: try await info("photo.jpg", "&bh=9:9").body)
                #expect(nine.blurHash == (try Self.expected(files["photo.jpg"]!, components: (9, 9))).blurHash && nine.blurHash.count == 4 + 2 * 81)
                for bad in ["&bh=0:3", "&bh=10:1", "&bh=4", "&bh=4:3:2", "&bh=-1:3", "&bh=%2B4:3", "&bh=4:3&bh=4:3", "&w=10"] {
                    let reply = try await info("photo.jpg", bad)
                    #expect(reply.status == 400 && code(reply.body) == "bad_parameter", "\(bad): \(reply.status)")
                }

                // Hostile sources: a header declaring 10^10 pixels is refused before any decode
                // (the process lives on), a text file is not an image.
                let huge = try await info("huge.png")
                #expect(huge.status == 413 && code(huge.body) == "too_many_pixels", "\(huge.status) \(String(decoding: huge.body, as: UTF8.self))")
                let text = try await info("notes.txt")
                #expect(text.status == 415 && code(text.body) == "not_an_image", "\(text.status) \(String(decoding: text.body, as: UTF8.self))")
                #expect(try await ServeProcessAttackTests.get(base + "/health", client: client).status == 200)

                kill(serve.process.processIdentifier, SIGTERM)
                let (exitCode, log) = await serve.waitForExit()
                #expect(exitCode == 0, "\(log)")
                try await client.shutdown()
            }
        }

        /// `/info` fetches through the same guard as `/img`: private and literal addresses are
        /// refused before connecting (the connector could only reach 127.0.0.1 anyway), and a
        /// source off the allowed list is never fetched.
        @Test func infoIsGuardedLikeImg() async throws {
            try await ServerSSRFTests.withGuardedServer(names: ["inside.test": "10.0.0.7"]) { harness, connector in
                for source in ["http://inside.test/images/photo.jpg", "http://127.0.0.1:\(harness.origin.port)/images/photo.jpg",
                               "http://169.254.169.254/latest/meta-data", "http://[::1]/images/photo.jpg"] {
                    let reply = try await harness.get("/info?url=" + ServerHarness.encode(source))
                    ServerErrorTests.expectError(reply, 403, "address_refused")
                }
                #expect(connector.attempts.isEmpty, "no connection was attempted: \(connector.attempts)")
                #expect(harness.origin.totalRequests == 0)
            }
            try await withImageServer({ $0.allowedSources = ["http://127.0.0.1:1/only/"] }) { harness in
                let reply = try await harness.get("/info?url=" + ServerHarness.encode(harness.origin.imageURL("photo.jpg").absoluteString))
                ServerErrorTests.expectError(reply, 403, "source_not_allowed")
                #expect(harness.origin.totalRequests == 0)
            }
        }
    }
}
