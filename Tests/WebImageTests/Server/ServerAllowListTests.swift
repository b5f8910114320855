import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `--allow-source` compared part by part with the parsed source, and every redirect hop
    /// checked against it. "Other hosts" are names in the server's resolver hook, all mapped to
    /// the public stand-in that ``LoopbackConnector`` sends to the origin on 127.0.0.1 (and
    /// nowhere else): a refusal shows up as no connection.
    @Suite("Image server: allowed sources and redirects")
    struct ServerAllowListTests {
        static let names = ["allowed.test": "203.0.113.10", "other.test": "203.0.113.10", "cdn.allowed.test": "203.0.113.10", "evilallowed.test": "203.0.113.10"]

        static func withAllowList(_ entries: [String], _ body: (ServerHarness, LoopbackConnector) async throws -> Void) async throws {
            try await withOrigin { origin in
                let connector = LoopbackConnector(originPort: origin.port)
                try await withImageServer(origin: origin, {
                    $0.allowPrivateNetworks = false
                    $0.resolver = MappedHostResolver(Self.names.mapValues { [IPAddress($0)!] }, fallback: nil)
                    $0.connector = connector
                    $0.allowedSources = entries
                }) { harness in
                    try await body(harness, connector)
                }
            }
        }

        static func get(_ harness: ServerHarness, _ source: String) async throws -> ServerHarness.Reply {
            try await harness.get(harness.imgPath([("url", source), ("w", "10")]))
        }

        @Test func userinfoCannotDisguiseAnotherHost() async throws {
            try await Self.withAllowList(["http://allowed.test/"]) { harness, connector in
                for trick in ["http://allowed.test:80@other.test/images/photo.jpg", "http://allowed.test@other.test/images/photo.jpg",
                              "http://user:pass@allowed.test/images/photo.jpg", "http://@allowed.test/images/photo.jpg"] {
                    ServerErrorTests.expectError(try await Self.get(harness, trick), 400, "invalid_url")
                }
                #expect(connector.attempts.isEmpty, "nothing was fetched: \(connector.attempts)")
                #expect(try await Self.get(harness, "http://allowed.test/images/photo.jpg").status == 200)
            }
        }

        @Test func redirectsOutOfTheListAreRefused() async throws {
            try await Self.withAllowList(["http://allowed.test/"]) { harness, connector in
                for target in ["http://other.test/images/photo.jpg", "http://allowed.test:8080/images/photo.jpg", "https://allowed.test/images/photo.jpg",
                               "http://allowed.test:80@other.test/images/photo.jpg", "http://allowed.test.other.test/images/photo.jpg"] {
                    let redirect = "http://allowed.test/redirect-to?location=" + ServerHarness.encode(target)
                    let reply = try await Self.get(harness, redirect)
                    ServerErrorTests.expectError(reply, 403, "source_not_allowed")
                    #expect(reply.json?["message"]?.contains("redirect") == true, "\(target): \(String(describing: reply.json))")
                }
                #expect(connector.attempts.count == 5, "only the allowed first hops connected: \(connector.attempts)")
                let inside = "http://allowed.test/redirect-to?location=" + ServerHarness.encode("http://ALLOWED.test:80/images/photo.jpg")
                #expect(try await Self.get(harness, inside).status == 200, "a redirect inside the list is followed")
            }
        }

        @Test func hostsAndPortsAreComparedNormalised() async throws {
            try await Self.withAllowList(["HTTP://Allowed.Test./"]) { harness, _ in
                for same in ["HTTP://ALLOWED.TEST/images/photo.jpg", "http://allowed.test:80/images/photo.jpg", "http://allowed.test./images/photo.jpg",
                             "http://allowed.test/images/%70hoto.jpg", "http://%61llowed.test/images/photo.jpg"] {
                    #expect(try await Self.get(harness, same).status == 200, "\(same)")
                }
                for other in ["http://allowed.test:8080/images/photo.jpg", "https://allowed.test/images/photo.jpg", "http://evilallowed.test/images/photo.jpg",
                              "http://cdn.allowed.test/images/photo.jpg", "http://other.test/images/photo.jpg"] {
                    ServerErrorTests.expectError(try await Self.get(harness, other), 403, "source_not_allowed")
                }
            }
            try await Self.withAllowList(["http://allowed.test:8080/"]) { harness, connector in
                ServerErrorTests.expectError(try await Self.get(harness, "http://allowed.test/images/photo.jpg"), 403, "source_not_allowed")
                #expect(try await Self.get(harness, "http://allowed.test:8080/images/photo.jpg").status == 200)
                #expect(connector.attempts.count == 1)
            }
        }

        @Test func pathPrefixesEndAtASlash() async throws {
            try await Self.withAllowList(["http://allowed.test/images"]) { harness, connector in
                #expect(try await Self.get(harness, "http://allowed.test/images/photo.jpg").status == 200)
                for outside in ["http://allowed.test/images-private/photo.jpg", "http://allowed.test/imagesphoto.jpg", "http://allowed.test/images/../redirect-to?location=x",
                                "http://allowed.test/images/%2E%2E/private/photo.jpg", "http://allowed.test/images%2F..%2Fprivate/photo.jpg",
                                "http://allowed.test/Images/photo.jpg", "http://allowed.test/"] {
                    ServerErrorTests.expectError(try await Self.get(harness, outside), 403, "source_not_allowed")
                }
                #expect(connector.attempts.count == 1, "refused paths are never fetched")
            }
        }

        /// Spellings an origin may read as another path than the one compared (red team, stop 53):
        /// `..;` (Tomcat, Jetty and Spring resolve it as `..`), twice-encoded and full-width dots
        /// and slashes are refused under a path entry; bytes that are not UTF-8 (`%FF`), which the
        /// HTTP client sent as the path `/`, are refused for every source.
        @Test func pathSpellingsAnOriginMayReadOtherwiseAreRefused() async throws {
            try await Self.withAllowList(["http://allowed.test/images/"]) { harness, connector in
                #expect(try await Self.get(harness, "http://allowed.test/images/photo.jpg").status == 200)
                for outside in ["http://allowed.test/images/..;/private/photo.jpg", "http://allowed.test/images/%2e%2e;x/photo.jpg",
                                "http://allowed.test/images/.;/photo.jpg", "http://allowed.test/images/%252e%252e/photo.jpg",
                                "http://allowed.test/images/%252F..%252Fphoto.jpg", "http://allowed.test/images/%EF%BC%8E%EF%BC%8E/photo.jpg",
                                "http://allowed.test/images/%E2%80%A4%E2%80%A4/photo.jpg"] {
                    ServerErrorTests.expectError(try await Self.get(harness, outside), 403, "source_not_allowed")
                }
                for undecodable in ["http://allowed.test/images/%FF/photo.jpg", "http://allowed.test/images/photo.jpg?q=%C0"] {
                    let reply = try await Self.get(harness, undecodable)
                    #expect(reply.status == 400, "\(undecodable): \(reply.status)")
                }
                #expect(connector.attempts.count == 1, "refused paths are never fetched")
            }
            try await Self.withAllowList([]) { harness, connector in
                let reply = try await Self.get(harness, "http://allowed.test/images/%FF/photo.jpg")
                #expect(reply.status == 400 && connector.attempts.isEmpty, "\(reply.status)")
            }
        }

        @Test func aLeadingWildcardAllowsSubdomainsOnly() async throws {
            try await Self.withAllowList(["http://*.allowed.test/"]) { harness, _ in
                #expect(try await Self.get(harness, "http://cdn.allowed.test/images/photo.jpg").status == 200)
                for outside in ["http://allowed.test/images/photo.jpg", "http://evilallowed.test/images/photo.jpg"] {
                    ServerErrorTests.expectError(try await Self.get(harness, outside), 403, "source_not_allowed")
                }
            }
        }

        @Test func entriesAreParsedAtStart() throws {
            for bad in ["allowed.test", "allowed.test/images", "ftp://allowed.test/", "http://user@allowed.test/", "http://allowed.test/?q=1", "http://", "http://*./", "http://allowed.test:0/"] {
                #expect(throws: SourceAllowList.InvalidEntry.self, "\(bad)") { try SourceAllowList([bad]) }
            }
            var configuration = ImageServerConfiguration()
            configuration.allowedSources = ["http://127.0.0.1:"]
            #expect(throws: SourceAllowList.InvalidEntry.self) { try ImageServer(configuration: configuration, logger: quietLogger) }
            let list = try SourceAllowList(["https://images.example.com/public/", "http://[::1]:8080/"])
            func allows(_ text: String) throws -> Bool { list.allows(try SourceURL(URL(string: text)!)) }
            #expect(try allows("https://IMAGES.example.com:443/public/a/../b.jpg"))
            #expect(try !allows("https://images.example.com/public/../private/b.jpg"))
            #expect(try allows("http://[0:0::1]:8080/x"))
            #expect(try allows("https://images.example.com/public/%7Ea.jpg") && allows("https://images.example.com/public/~a.jpg"))
            // Foundation's URL applies IDNA: an internationalised entry and source meet as punycode.
            let idn = try SourceAllowList(["https://bücher.example/"])
            #expect(idn.allows(try SourceURL(URL(string: "https://xn--bcher-kva.example/a.jpg")!)))
        }

        @Test func serveRefusesAnInvalidEntryAtStart() async throws {
            let result = try await WebImageCommand.run(["serve", "--port", "0", "--allow-source", "images.example.com"])
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("scheme://host"))
        }
    }
}
