import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// Every error code of `/img`: status, JSON body, short max-age, and nothing internal leaked.
    @Suite("Image server: errors")
    struct ServerErrorTests {
        static func expectError(_ reply: ServerHarness.Reply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(reply.status == status, "\(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
            #expect(reply.header("content-type") == "application/json", sourceLocation: sourceLocation)
            let json = reply.json
            #expect(json?["error"] == code, sourceLocation: sourceLocation)
            let message = json?["message"] ?? ""
            #expect(!message.isEmpty, sourceLocation: sourceLocation)
            for leak in ["/work", "/tmp", ".swift", "Error(", "underlying", "NIO"] {
                #expect(!message.contains(leak), "message leaks \(leak): \(message)", sourceLocation: sourceLocation)
            }
        }

        @Test func badParametersAre400() async throws {
            try await withImageServer { harness in
                let url = harness.origin.imageURL("photo.jpg").absoluteString
                let cases: [[(String, String)]] = [
                    [], [("url", "")], [("url", "ftp://example.com/a.jpg")], [("url", "not a url")],
                    [("url", url), ("w", "0")], [("url", url), ("w", "abc")], [("url", url), ("h", "-3")],
                    [("url", url), ("w", "9000")], [("url", url), ("fit", "stretch")], [("url", url), ("fit", "cover"), ("w", "10")],
                    [("url", url), ("format", "bmp")], [("url", url), ("q", "0")], [("url", url), ("q", "101")],
                    [("url", url), ("process", "zoom:2")], [("url", url), ("process", "resize:9000x10")],
                    [("url", url), ("color", "red")], [("url", url), ("w", "10"), ("w", "20")],
                ]
                for query in cases {
                    let reply = try await harness.get(harness.imgPath(query))
                    #expect(reply.status == 400, "\(query)")
                    #expect(["bad_parameter", "invalid_url"].contains(reply.json?["error"] ?? ""), "\(query)")
                    #expect(reply.header("cache-control") == "public, max-age=10")
                }
                #expect(harness.origin.totalRequests == 0, "nothing is fetched for a bad request")
            }
        }

        @Test func sourceFailuresMapToTheirCodes() async throws {
            try await withImageServer { harness in
                Self.expectError(try await harness.image("missing.jpg"), 404, "source_not_found")
                Self.expectError(try await harness.image("photo.jpg", query: "status=500"), 502, "source_error")
                Self.expectError(try await harness.image("photo.jpg", query: "status=403"), 502, "source_error")
                Self.expectError(try await harness.image("photo.jpg", query: "corrupt=1"), 415, "not_an_image")
                // Nothing listens on port 1: the connection is refused.
                Self.expectError(try await harness.get(harness.imgPath([("url", "http://127.0.0.1:1/a.jpg")])), 502, "source_error")
                let text = harness.origin.url("/text").absoluteString
                Self.expectError(try await harness.get(harness.imgPath([("url", text)])), 415, "not_an_image")
                let loop = harness.origin.url("/redirect/loop").absoluteString
                Self.expectError(try await harness.get(harness.imgPath([("url", loop)])), 502, "source_error")
            }
        }

        @Test func slowSourceIs504() async throws {
            try await withImageServer({ $0.fetchTimeout = .seconds(2) }) { harness in
                Self.expectError(try await harness.image("photo.jpg", query: "delay=20000"), 504, "source_timeout")
            }
        }

        @Test func undecodableSourceIs422() async throws {
            var broken = try SampleImages.jpeg(width: 300, height: 200)
            broken.replaceSubrange(600..<broken.count - 2, with: Data(repeating: 0xFF, count: broken.count - 602))
            try await withImageServer(files: ["broken.jpg": broken]) { harness in
                Self.expectError(try await harness.image("broken.jpg", [("w", "50")]), 422, "undecodable")
            }
        }

        @Test func limitsAre413() async throws {
            let bomb = PNGBomb.header(width: 20_000, height: 20_000)
            try await withImageServer(files: ["bomb.png": bomb, "photo.jpg": try SampleImages.jpeg(width: 1000, height: 1000)], {
                $0.maxSourceBytes = 100_000
            }) { harness in
                Self.expectError(try await harness.image("bomb.png", [("w", "10")]), 413, "too_many_pixels")
                let big = harness.origin.url("/big?size=5000000").absoluteString
                Self.expectError(try await harness.get(harness.imgPath([("url", big)])), 413, "source_too_large")
                let streamed = harness.origin.url("/big?size=5000000&length=0").absoluteString
                Self.expectError(try await harness.get(harness.imgPath([("url", streamed)])), 413, "source_too_large")
            }
            // The pixel limit is configurable: a 1 MP photo is refused under a 0.5 MP limit.
            try await withImageServer({ $0.maxSourcePixels = 500_000 }) { harness in
                Self.expectError(try await harness.image("photo.jpg", [("w", "10")]), 413, "too_many_pixels")
            }
        }

        @Test func processingTimeoutIs504() async throws {
            try await withImageServer({ $0.processingTimeout = .nanoseconds(1) }) { harness in
                // A full decode and a wide blur (debug build: about a second) against a 1 ns deadline.
                let response = try await harness.image("landscape.jpg", [("process", "blur:8"), ("format", "png")])
                Self.expectError(response, 504, "processing_timeout")
                // The server's moment, not the URL's: no CDN keeps it (it was public, max-age=10).
                #expect(response.header("cache-control") == "no-store")
            }
        }

        @Test func aFullQueueIs429WithRetryAfter() async throws {
            try await withImageServer({ $0.maxConcurrentRenders = 1; $0.maxQueuedRenders = 0 }) { harness in
                let slow = Task { try await harness.image("photo.jpg", query: "delay=2000", [("w", "10")]) }
                // Wait until the slow request holds the only slot (the origin has seen it).
                #expect(await eventually(timeout: .seconds(20)) { harness.origin.requestCount(path: "/images/photo.jpg") == 1 })
                let ready = try await harness.get("/ready")
                #expect(ready.status == 503)
                let refused = try await harness.image("logo.png", [("w", "10")])
                Self.expectError(refused, 429, "busy")
                #expect(refused.header("retry-after") == "1" && refused.header("cache-control") == "no-store")
                let finished = try await slow.value
                #expect(finished.status == 200, "\(String(decoding: finished.body, as: UTF8.self))")
                #expect(try await harness.get("/ready").status == 200)
                #expect(try await harness.image("logo.png", [("w", "10")]).status == 200)
            }
        }

        @Test func waitingRequestsAreServedInTurn() async throws {
            try await withImageServer({ $0.maxConcurrentRenders = 1; $0.maxQueuedRenders = 8 }) { harness in
                let replies = try await withThrowingTaskGroup(of: Int.self) { group in
                    for n in 1...6 { group.addTask { try await harness.image("thumb-\(n).jpg", query: "delay=100", [("w", "20")]).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies == Array(repeating: 200, count: 6))
                #expect(harness.origin.maxConcurrentRequests == 1, "one render slot: one fetch at a time")
            }
        }

        @Test func perClientLimitRefusesOnlyThatClient() async throws {
            try await withImageServer({ $0.maxRendersPerClient = 1 }) { harness in
                let alice = [("X-Forwarded-For", "198.51.100.1, 10.0.0.1")], bob = [("X-Forwarded-For", "198.51.100.2")]
                let slow = Task { try await harness.image("photo.jpg", query: "delay=2000", [("w", "10")], headers: alice) }
                #expect(await eventually(timeout: .seconds(20)) { harness.origin.requestCount(path: "/images/photo.jpg") == 1 })
                Self.expectError(try await harness.image("logo.png", [("w", "10")], headers: alice), 429, "busy")
                // The client is the address the proxy appended last: another first entry is the
                // same client (a client cannot escape the limit by writing the header itself).
                let spoofed = [("X-Forwarded-For", "203.0.113.9, 10.0.0.1")]
                Self.expectError(try await harness.image("icon@2x.png", [("w", "10")], headers: spoofed), 429, "busy")
                #expect(try await harness.image("logo.png", [("w", "10")], headers: bob).status == 200)
                #expect(try await slow.value.status == 200)
                #expect(try await harness.image("opaque.png", [("w", "10")], headers: alice).status == 200)
            }
        }

        @Test func withoutAProxyThePeerAddressIsTheClient() async throws {
            try await withImageServer({ $0.maxRendersPerClient = 1 }) { harness in
                let slow = Task { try await harness.image("photo.jpg", query: "delay=2000", [("w", "10")]) }
                #expect(await eventually(timeout: .seconds(20)) { harness.origin.requestCount(path: "/images/photo.jpg") == 1 })
                // Same peer (127.0.0.1), no X-Forwarded-For: the same client.
                Self.expectError(try await harness.image("logo.png", [("w", "10")]), 429, "busy")
                #expect(try await slow.value.status == 200)
                #expect(try await harness.image("logo.png", [("w", "10")]).status == 200)
            }
        }
    }
}
