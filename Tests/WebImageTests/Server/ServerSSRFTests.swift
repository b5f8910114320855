import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// SSRF refusals end to end. Host names are mapped by a resolver hook, and every connection
    /// goes through ``LoopbackConnector``, which records it and can only reach 127.0.0.1: a refused
    /// address must show up as no connection at all, and a broken guard still could not send a
    /// packet anywhere else.
    @Suite("Image server: SSRF protection")
    struct ServerSSRFTests {
        /// A server with protection on (unless `allowPrivate`), `names` mapped, and the connector.
        static func withGuardedServer(
            names: [String: String], allowPrivate: Bool = false,
            _ body: (ServerHarness, LoopbackConnector) async throws -> Void
        ) async throws {
            // The connector needs the origin's port, known only once the origin runs: start it first.
            try await withOrigin { origin in
                let connector = LoopbackConnector(originPort: origin.port)
                let mapped = names.mapValues { [IPAddress($0)!] }
                try await withImageServer(origin: origin, {
                    $0.allowPrivateNetworks = allowPrivate
                    $0.resolver = MappedHostResolver(mapped, fallback: nil)
                    $0.connector = connector
                }) { harness in
                    try await body(harness, connector)
                }
            }
        }

        static func source(_ host: String, _ path: String = "/images/photo.jpg") -> String { "http://\(host)\(path)" }

        @Test func everyRefusedClassIsRefusedBeforeConnecting() async throws {
            let names: [String: String] = Dictionary(uniqueKeysWithValues: AddressClassifierTests.refused.enumerated().map { ("h\($0.offset).test", $0.element.0) })
            try await Self.withGuardedServer(names: names) { harness, connector in
                for (name, address) in names.sorted(by: { $0.key < $1.key }) {
                    let reply = try await harness.get(harness.imgPath([("url", Self.source(name)), ("w", "10")]))
                    ServerErrorTests.expectError(reply, 403, "address_refused")
                    let message: String = reply.json?["message"] ?? ""
                    #expect(!message.contains(address), "the address itself is not revealed")
                }
                #expect(connector.attempts.isEmpty, "no connection was attempted: \(connector.attempts)")
                #expect(harness.origin.totalRequests == 0)
            }
        }

        @Test func literalAddressesAreRefusedToo() async throws {
            try await Self.withGuardedServer(names: [:]) { harness, connector in
                for literal in ["127.0.0.1:\(harness.origin.port)", "[::1]", "[::ffff:127.0.0.1]", "10.0.0.1", "169.254.169.254", "0.0.0.0", "[fd00::1]"] {
                    let reply = try await harness.get(harness.imgPath([("url", Self.source(literal))]))
                    ServerErrorTests.expectError(reply, 403, "address_refused")
                }
                #expect(connector.attempts.isEmpty)
            }
        }

        @Test func aNameResolvingToAnyPrivateAddressIsRefused() async throws {
            try await withOrigin { origin in
                let connector = LoopbackConnector(originPort: origin.port)
                let resolver = MappedHostResolver(["mixed.test": [LoopbackConnector.publicStandIn, IPAddress("10.0.0.5")!]], fallback: nil)
                try await withImageServer(origin: origin, { $0.allowPrivateNetworks = false; $0.resolver = resolver; $0.connector = connector }) { harness in
                    let reply = try await harness.get(harness.imgPath([("url", Self.source("mixed.test"))]))
                    ServerErrorTests.expectError(reply, 403, "address_refused")
                    #expect(connector.attempts.isEmpty)
                }
            }
        }

        @Test func publicNamesAreFetchedAndRedirectsIntoTheNetworkAreRefused() async throws {
            try await Self.withGuardedServer(names: ["public.test": "203.0.113.10"]) { harness, connector in
                let fine = try await harness.get(harness.imgPath([("url", Self.source("public.test")), ("w", "10")]))
                #expect(fine.status == 200)
                #expect(connector.attempts == [LoopbackConnector.publicStandIn])
                // A public source redirecting to 127.0.0.1 (DNS rebinding's cousin): the hop is checked.
                let target = "http://127.0.0.1:\(harness.origin.port)/images/logo.png"
                let redirect = Self.source("public.test", "/redirect-to?location=" + ServerHarness.encode(target))
                ServerErrorTests.expectError(try await harness.get(harness.imgPath([("url", redirect)])), 403, "address_refused")
                #expect(connector.attempts == [LoopbackConnector.publicStandIn, LoopbackConnector.publicStandIn], "only the public hop connected")
                #expect(harness.origin.requestCount(path: "/images/logo.png") == 0)
            }
        }

        @Test func allowingPrivateNetworksLiftsTheCheck() async throws {
            try await Self.withGuardedServer(names: ["internal.test": "127.0.0.1"], allowPrivate: true) { harness, connector in
                let reply = try await harness.get(harness.imgPath([("url", Self.source("internal.test")), ("w", "10")]))
                #expect(reply.status == 200)
                #expect(connector.attempts == [IPAddress("127.0.0.1")!])
            }
        }

        @Test func theDefaultConnectorPinsTheCheckedAddressAndKeepsTheHostName() async throws {
            // No test connector: the real PinnedHTTPConnector connects to the mapped address with
            // `Host: origin.test:PORT`, so the name is never resolved again.
            try await withImageServer({
                $0.resolver = MappedHostResolver(["origin.test": [IPAddress("127.0.0.1")!]], fallback: nil)
            }) { harness in
                let url = "http://origin.test:\(harness.origin.port)/images/photo.jpg"
                let reply = try await harness.get(harness.imgPath([("url", url), ("w", "10")]))
                #expect(reply.status == 200)
                #expect(harness.origin.requests.last?.headers["host"] == "origin.test:\(harness.origin.port)")
            }
        }

        @Test func unresolvableNamesAre502() async throws {
            try await Self.withGuardedServer(names: [:]) { harness, connector in
                ServerErrorTests.expectError(try await harness.get(harness.imgPath([("url", Self.source("nowhere.test"))])), 502, "source_error")
                #expect(connector.attempts.isEmpty)
            }
        }

        static func tlsFixture(_ name: String) throws -> Data {
            try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/tls").appendingPathComponent(name))
        }

        /// An https origin on 127.0.0.1 whose certificate names `images.test` only (signed by the
        /// test CA, `scripts/fixtures/make-tls-fixtures`), and a server mapping that name to 127.0.0.1.
        static func withNamedTLSOrigin(trustingTestCA: Bool, _ body: (ServerHarness, ImageOrigin) async throws -> Void) async throws {
            let origin = try await ImageOrigin.start(
                files: SampleFiles.standard, tls: (try tlsFixture("images-test.pem"), try tlsFixture("images-test-key.pem")))
            do {
                let ca = try tlsFixture("ca.pem")
                try await withImageServer(origin: origin, {
                    $0.resolver = MappedHostResolver(["images.test": [IPAddress("127.0.0.1")!]], fallback: nil)
                    if trustingTestCA { $0.sourceTrustedCertificates = [ca] }
                }) { harness in try await body(harness, origin) }
            } catch {
                await origin.stop()
                throw error
            }
            await origin.stop()
        }

        @Test func httpsConnectionsGoToTheCheckedAddressAndVerifyTheName() async throws {
            // images.test exists only in the resolver hook, and the certificate names only
            // images.test: a connection that re-resolved the name would find nothing, and one
            // verified against the address would fail. Success shows both halves of the pin.
            try await Self.withNamedTLSOrigin(trustingTestCA: true) { harness, origin in
                let url = "https://images.test:\(origin.port)/images/photo.jpg"
                let reply = try await harness.get(harness.imgPath([("url", url), ("w", "10")]))
                #expect(reply.status == 200, "\(reply.status) \(reply.json ?? [:])")
                #expect(origin.totalRequests == 1)
                #expect(origin.requests.last?.headers["host"] == "images.test:\(origin.port)")
            }
        }

        @Test func httpsCertificatesOfAnUntrustedCAAreRefused() async throws {
            try await Self.withNamedTLSOrigin(trustingTestCA: false) { harness, origin in
                let url = "https://images.test:\(origin.port)/images/photo.jpg"
                ServerErrorTests.expectError(try await harness.get(harness.imgPath([("url", url), ("w", "10")])), 502, "source_error")
                #expect(origin.totalRequests == 0)
            }
        }

        @Test func httpsSourcesKeepCertificateVerification() async throws {
            // The https path (a per-request client pinned with dnsOverride) verifies certificates:
            // the test origin's self-signed one is refused before any HTTP request reaches it.
            let origin = try await ImageOrigin.start(files: SampleFiles.standard, tls: (try Self.tlsFixture("cert.pem"), try Self.tlsFixture("key.pem")))
            do {
                try await withImageServer(origin: origin) { harness in
                    let reply = try await harness.get(harness.imgPath([("url", origin.imageURL("photo.jpg").absoluteString), ("w", "10")]))
                    ServerErrorTests.expectError(reply, 502, "source_error")
                    #expect(origin.totalRequests == 0)
                }
            } catch {
                await origin.stop()
                throw error
            }
            await origin.stop()
        }
    }
}
