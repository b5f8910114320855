import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// Result-cache keys and ETags come from the parsed, canonical parameters in a length-prefixed
    /// encoding: a source URL that ends in `&w=4` (or any other parameter), or a `process` spec
    /// holding an encoded separator, cannot take another request's key.
    @Suite("Image server: unambiguous cache keys and ETags")
    struct ServerKeyTests {
        /// For each parameter: the forged request carries `NAME=VALUE` inside its `url=` (the
        /// source ignores the query), the real one as a parameter.
        static let forgeries: [(name: String, value: String, base: [(String, String)])] = [
            ("w", "4", []), ("h", "4", []), ("fit", "fill", [("w", "12"), ("h", "4")]), ("format", "png", []),
            ("q", "5", [("format", "jpeg")]), ("process", "grayscale", [("format", "png")]),
            ("enlarge", "1", [("w", "1200")]), ("dpr", "2", [("w", "10")]),
            ("gravity", "no", [("w", "100"), ("h", "10"), ("fit", "cover")]), ("extend", "1", [("w", "20"), ("h", "10")]),
            ("padding", "3", [("w", "10")]), ("bg", "ff0000", [("w", "10"), ("padding", "2")]), ("sharpen", "2", [("w", "10")]),
            ("pixelate", "4", [("w", "10")]), ("blur", "2", [("w", "10")]), ("max_bytes", "300", [("w", "100"), ("format", "jpeg")]),
            ("wm", "1:nowe", [("w", "100"), ("format", "png")]),
        ]

        /// A result cache folder kept across a restart with other settings: the renders of the
        /// old settings are not served, and the ETag differs (red team, stop 49: `--quality 5
        /// --max-output-side 200` renders were served after a restart without them, with the
        /// same strong ETag as the real render).
        @Test func renderingSettingsAreInTheKeyAndETag() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withOrigin { origin in
                let path = "/img?url=" + ServerHarness.encode(origin.imageURL("landscape.jpg").absoluteString) + "&format=jpeg"
                let settings: [(String, (inout ImageServerConfiguration) -> Void)] = [
                    ("small and rough", { $0.defaultQuality = 5; $0.maxOutputSide = 200 }),
                    ("the defaults", { _ in }),
                    ("other frames", { $0.maxAnimationFrames = 2 }),
                ]
                var etags: Set<String> = []
                for (label, change) in settings {
                    let response = try await withImageServer(origin: origin, { $0.resultCacheDirectory = directory; change(&$0) }) { harness in
                        try await harness.get(path)
                    }
                    #expect(response.status == 200 && response.header("X-Cache") == "miss", "\(label): \(response.header("X-Cache") ?? "-")")
                    etags.insert(response.header("ETag") ?? "")
                }
                #expect(etags.count == 3)
            }
        }

        @Test func eachParameterSmuggledInTheURLGetsItsOwnKeyETagAndRender() async throws {
            let mark = try ServerWatermark(data: ServerWatermarkTests.red)
            try await withImageServer({ $0.watermark = mark }) { harness in
                let source = harness.origin.imageURL("photo.jpg").absoluteString + "?a"
                for (name, value, base) in Self.forgeries {
                    let forged = try await harness.get(harness.imgPath([("url", source + "&\(name)=\(value)")] + base))
                    let real = try await harness.get(harness.imgPath([("url", source)] + base + [(name, value)]))
                    #expect(forged.status == 200 && real.status == 200, "\(name)")
                    #expect(real.header("X-Cache") == "miss", "\(name): the real request is not answered from the forged one's entry")
                    #expect(forged.header("ETag") != real.header("ETag"), "\(name)")
                    #expect(forged.body != real.body, "\(name): each got its own render")
                    let again = try await harness.get(harness.imgPath([("url", source)] + base + [(name, value)]))
                    #expect(again.header("X-Cache") == "hit-memory" && again.body == real.body, "\(name): the real entry is its own")
                }
                let real = try await harness.get(harness.imgPath([("url", source), ("w", "4")]))
                #expect(try ImageCoderRegistry.default.decode(real.body).pixelWidth == 4)
            }
        }

        @Test func keysDifferForEveryParameterMovedIntoTheURL() throws {
            let source = "http://images.test/a.jpg?a"
            func key(_ query: [(String, String)]) throws -> String {
                try ImageParameters(query: query, maxSide: 8192).cacheKey(negotiated: "jpeg")
            }
            for (name, value, base) in Self.forgeries {
                let forged = try key([("url", source + "&\(name)=\(value)")] + base)
                let real = try key([("url", source)] + base + [(name, value)])
                #expect(forged != real, "\(name)")
            }
            // trim (whose result depends on the picture) and values that differ only in spelling.
            #expect(try key([("url", source + "&trim=10")]) != key([("url", source), ("trim", "10")]))
            #expect(try key([("url", source), ("dpr", "2")]) == key([("url", source), ("dpr", "2.0")]))
            #expect(try key([("url", source), ("padding", "3")]) == key([("url", source), ("padding", "3,3,3,3")]))
            #expect(try key([("url", source), ("bg", "FF0000")]) == key([("url", source), ("bg", "ff0000ff")]))
            #expect(try key([("url", source), ("padding", "1,2,3,4")]) != key([("url", source), ("padding", "4,3,2,1")]))
            #expect(try key([("url", source), ("w", "10"), ("h", "10"), ("fit", "cover"), ("gravity", "fp:0.1:0.2")])
                != key([("url", source), ("w", "10"), ("h", "10"), ("fit", "cover"), ("gravity", "fp:0.2:0.1")]))
            #expect(try key([("url", source), ("blur", "2")]) != key([("url", source), ("process", "blur:2")]))
            // wm: one render, one key, whatever the spelling; opacity 0 is no watermark.
            #expect(try key([("url", source), ("wm", "0.5")]) == key([("url", source), ("wm", "0.50:ce:0:0:0")]))
            #expect(try key([("url", source), ("wm", "0")]) == key([("url", source)]))
            #expect(try key([("url", source), ("wm", "0.5:no:1:2")]) != key([("url", source), ("wm", "0.5:no:2:1")]))
            #expect(try ImageParameters(query: [("url", source), ("wm", "1")], maxSide: 8192).cacheKey(negotiated: "png", watermark: "aa")
                != ImageParameters(query: [("url", source), ("wm", "1")], maxSide: 8192).cacheKey(negotiated: "png", watermark: "bb"))
            // A value that imitates the encoding itself.
            #expect(try key([("url", source + ";w=1:4;")]) != key([("url", source), ("w", "4")]))
            #expect(try key([("url", source + "%3Bw%3D1%3A4%3B")]) != key([("url", source), ("w", "4")]))
            // One source, spelled differently, is one key; one process, spelled differently, too.
            #expect(try key([("url", "HTTP://Images.Test:80/a.jpg?a")]) == key([("url", "http://images.test/a.jpg?a")]))
            #expect(try key([("url", source), ("process", "resize:10x10")]) == key([("url", source), ("process", "resize:10x10:fit")]))
        }

        @Test func separatorsInProcessAreRefusedOrKeyedApart() async throws {
            try await withImageServer { harness in
                let source = harness.origin.imageURL("photo.jpg").absoluteString
                for smuggled in ["grayscale&w=4", "grayscale;w=4", "grayscale\nw=4", "grayscale&url=http://other.test/x.jpg"] {
                    let reply = try await harness.get(harness.imgPath([("url", source), ("process", smuggled)]))
                    ServerErrorTests.expectError(reply, 400, "bad_parameter")
                }
                let grey = try await harness.get(harness.imgPath([("url", source), ("process", "grayscale"), ("w", "4")]))
                let greyInProcess = try await harness.get(harness.imgPath([("url", source), ("process", "grayscale,resize:4x4")]))
                #expect(grey.status == 200 && greyInProcess.status == 200)
                #expect(grey.header("ETag") != greyInProcess.header("ETag"))
            }
        }

        @Test func aSignatureCoversTheExactQuery() async throws {
            let key = Data("secret".utf8)
            try await withImageServer({ $0.signingKeys = [key] }) { harness in
                let source = harness.origin.imageURL("photo.jpg").absoluteString + "?a"
                let signed = URLSigner(keys: [key]).sign(harness.imgPath([("url", source + "&w=4")]))
                #expect(try await harness.get(signed).status == 200)
                // The same characters with the separator un-encoded: another request, not signed.
                let moved = signed.replacingOccurrences(of: "%26w%3D4", with: "&w=4")
                #expect(moved != signed)
                ServerErrorTests.expectError(try await harness.get(moved), 403, "bad_signature")
            }
        }
    }
}
