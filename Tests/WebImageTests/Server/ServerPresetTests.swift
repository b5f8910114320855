import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// Presets (`--preset NAME=PARAM:VALUE/…`, `preset=`, the `default` preset, `--only-presets`)
    /// through a real, signing `webimage serve` process (``ServerGeometryTests/withServe(_:_:)``):
    /// the answers decoded, their sizes, pixels, ETags and `X-Cache` checked.
    @Suite("Image server: presets (process)")
    struct ServerPresetTests {
        typealias G = ServerGeometryTests

        static let presets = [
            "--preset", "thumb=w:100/h:100/fit:cover/format:png",
            "--preset", "strip=w:200/h:25/fit:cover/gravity:so/format:png",
            "--preset", "framed=padding:1,2,3,4/bg:ff0000/format:png",
        ]

        /// Status, `ETag`, `X-Cache` and body of a signed `/img` for `name` with `query`.
        static func fetch(_ serve: G.Serve, _ name: String, _ query: String) async throws -> (status: Int, etag: String?, cache: String?, body: Data) {
            let path = "/img?url=\(ServerHarness.encode(serve.origin.imageURL(name).absoluteString))&" + query
            let response = try await serve.client.execute(HTTPClientRequest(url: serve.base + G.signer.sign(path)), timeout: .seconds(60))
            let body = Data(buffer: try await response.body.collect(upTo: 10 << 20))
            return (Int(response.status.code), response.headers.first(name: "etag"), response.headers.first(name: "x-cache"), body)
        }

        @Test func aPresetRendersItsParametersAndTheQueryOverridesThem() async throws {
            try await G.withServe(Self.presets) { serve in
                let thumb = try await serve.image("quadrants.png", "preset=thumb")
                #expect(thumb.pixelWidth == 100 && thumb.pixelHeight == 100)
                #expect(G.near(G.rgb(thumb, 10, 20), G.red) && G.near(G.rgb(thumb, 90, 80), G.yellow))
                // An explicit parameter wins over the preset's.
                let narrower = try await serve.image("quadrants.png", "preset=thumb&w=50")
                #expect(narrower.pixelWidth == 50 && narrower.pixelHeight == 100)
                // gravity=so from the preset: the bottom strip.
                let strip = try await serve.image("quadrants.png", "preset=strip")
                #expect(strip.pixelWidth == 200 && strip.pixelHeight == 25)
                #expect(G.near(G.rgb(strip, 10, 12), G.blue) && G.near(G.rgb(strip, 190, 12), G.yellow))
                // preset=a:b applies a, then b: b's values win where both set one.
                let both = try await serve.image("quadrants.png", "preset=thumb:strip")
                #expect(both.pixelWidth == 200 && both.pixelHeight == 25)
                // A preset value holding commas (padding:1,2,3,4) is one value.
                let framed = try await serve.image("small.png", "preset=framed")
                #expect(framed.pixelWidth == 20 + 2 + 4 && framed.pixelHeight == 10 + 1 + 3 && G.rgb(framed, 0, 0) == G.red)
                // Unknown presets, a repeated preset=, too many names: 400 naming the preset.
                let unknown = try await serve.refusal("quadrants.png", "preset=nope", naming: "nope")
                #expect(unknown.status == 400 && unknown.code == "bad_parameter" && unknown.named, "\(unknown)")
                let later = try await serve.refusal("quadrants.png", "preset=thumb:nope", naming: "nope")
                #expect(later.status == 400 && later.named)
                for query in ["preset=thumb&preset=strip", "preset=" + Array(repeating: "thumb", count: 9).joined(separator: ":"), "preset="] {
                    let refused = try await serve.refusal("quadrants.png", query, naming: "preset")
                    #expect(refused.status == 400 && refused.code == "bad_parameter", "\(query): \(refused)")
                }
                // A preset combined with a parameter into something invalid is refused like any query.
                let invalid = try await serve.refusal("quadrants.png", "preset=thumb&fit=inside&gravity=no", naming: "gravity")
                #expect(invalid.status == 400 && invalid.named)
            }
        }

        @Test func twoSpellingsOfOneRenderShareACacheEntryAndOthersNever() async throws {
            try await G.withServe(Self.presets) { serve in
                let preset = try await Self.fetch(serve, "quadrants.png", "preset=thumb")
                #expect(preset.status == 200 && preset.cache == "miss")
                // The same parameters spelt out: the preset's entry, its ETag.
                let spelt = try await Self.fetch(serve, "quadrants.png", "w=100&h=100&fit=cover&format=png")
                #expect(spelt.cache == "hit-memory" && spelt.etag == preset.etag && spelt.body == preset.body)
                let overridden = try await Self.fetch(serve, "quadrants.png", "preset=thumb&h=100")
                #expect(overridden.cache == "hit-memory" && overridden.etag == preset.etag)
                // Another render: another entry.
                let other = try await Self.fetch(serve, "quadrants.png", "preset=thumb&w=50")
                #expect(other.cache == "miss" && other.etag != preset.etag)
                // A preset's name smuggled into the source URL is part of the URL, not a preset.
                let source = serve.origin.imageURL("quadrants.png").absoluteString + "?a"
                let forged = try await serve.client.execute(
                    HTTPClientRequest(url: serve.base + G.signer.sign("/img?url=" + ServerHarness.encode(source + "&preset=thumb") + "&format=png")), timeout: .seconds(60))
                let forgedBody = Data(buffer: try await forged.body.collect(upTo: 10 << 20))
                #expect(forged.status.code == 200 && forged.headers.first(name: "etag") != preset.etag)
                #expect(try ImageCoderRegistry.default.decode(forgedBody).pixelWidth == 400)
                // The signature covers the preset's name: another name breaks it.
                let path = "/img?url=\(ServerHarness.encode(serve.origin.imageURL("quadrants.png").absoluteString))&preset=thumb"
                let moved = G.signer.sign(path).replacingOccurrences(of: "preset=thumb", with: "preset=strip")
                let refused = try await ServeProcessAttackTests.get(serve.base + moved, client: serve.client)
                #expect(refused.status == 403)
            }
        }

        @Test func theDefaultPresetAppliesToEveryRequest() async throws {
            try await G.withServe(["--preset", "default=format:png/padding:2/bg:00ff00", "--preset", "bare=padding:0"]) { serve in
                let padded = try await serve.image("small.png", "")
                #expect(padded.pixelWidth == 24 && padded.pixelHeight == 14 && G.rgb(padded, 0, 0) == G.green)
                let withWidth = try await serve.image("small.png", "w=10")
                #expect(withWidth.pixelWidth == 14 && withWidth.pixelHeight == 9)
                // A named preset and the query override the default.
                let bare = try await serve.image("small.png", "preset=bare")
                #expect(bare.pixelWidth == 20 && bare.pixelHeight == 10)
                let explicit = try await serve.image("small.png", "padding=0")
                #expect(explicit.pixelWidth == 20 && G.rgb(explicit, 0, 0) == [50, 100, 150])
            }
        }

        @Test func onlyPresetsRefusesEveryOtherParameter() async throws {
            // From the environment, as imgproxy's IMGPROXY_PRESETS: commas between presets, and inside a value.
            let environment = ["WEBIMAGE_PRESETS": "thumb=w:100/h:100/fit:cover/format:png,framed=padding:1,2,3,4/format:png", "WEBIMAGE_ONLY_PRESETS": "1"]
            try await G.withServe(environment: environment) { serve in
                let thumb = try await serve.image("quadrants.png", "preset=thumb")
                #expect(thumb.pixelWidth == 100 && thumb.pixelHeight == 100)
                let framed = try await serve.image("small.png", "preset=framed")
                #expect(framed.pixelWidth == 26 && framed.pixelHeight == 14)
                for (query, parameter) in [("w=10", "w"), ("preset=thumb&w=50", "w"), ("preset=thumb&format=jpeg", "format"), ("process=grayscale", "process")] {
                    let refused = try await serve.refusal("quadrants.png", query, naming: parameter)
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "\(query): \(refused)")
                }
                let unknown = try await serve.refusal("quadrants.png", "preset=nope", naming: "nope")
                #expect(unknown.status == 400 && unknown.named)
            }
        }

        @Test func aPresetThatCannotBeUsedStopsTheServerAtStart() async throws {
            let file = temporaryDirectory().appendingPathComponent("presets.conf")
            try "# thumbnails\n\nthumb=w:100/h:100/fit:cover\nbad=q:101\n".write(to: file, atomically: true, encoding: .utf8)
            for (arguments, message) in [
                (["--preset", "thumb"], "is not NAME=PARAMETER:VALUE"), (["--preset", "th umb=w:1"], "preset name"),
                (["--preset", "thumb=w:0"], "preset 'thumb': 'w'"), (["--preset", "thumb=url:http://a.test/"], "'url' cannot be preset"),
                (["--preset", "thumb=fit:cover"], "needs both 'w' and 'h'"), (["--preset", "a=w:1", "--preset", "a=w:2"], "more than once"),
                (["--preset", "thumb=w:1/w:2"], "'w' is given more than once"), (["--preset", "thumb=nope:1"], "unknown parameter 'nope'"),
                (["--preset", "thumb=w:1//h:1"], "is not PARAMETER:VALUE"), (["--preset", "thumb="], "has no parameters"),
                (["--preset", "marked=wm:0.5"], "needs a watermark image"), (["--only-presets"], "needs at least one preset"),
                (["--preset", "thumb=w:9000"], "over the output limit"), (["--presets-file", file.path], "preset 'bad': 'q'"),
                (["--presets-file", "/nonexistent/presets.conf"], "cannot read the presets file"),
            ] {
                let result = try await WebImageCommand.run(["serve", "--port", "0"] + arguments)
                #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
            }
        }

        @Test func expansionKeysTheExpandedParameters() throws {
            let presets = try ImagePresets(["thumb=w:100/h:100/fit:cover", "default=q:70"], maxSide: 8192)
            func key(_ query: [(String, String)]) throws -> String {
                try ImageParameters(query: presets.expand([("url", "http://images.test/a.jpg")] + query), maxSide: 8192).cacheKey(negotiated: "jpeg")
            }
            #expect(try key([("preset", "thumb")]) == key([("w", "100"), ("h", "100"), ("fit", "cover"), ("q", "70")]))
            #expect(try key([("preset", "thumb"), ("q", "70")]) == key([("preset", "thumb")]))
            #expect(try key([("preset", "thumb"), ("w", "50")]) != key([("preset", "thumb")]))
            #expect(try key([("preset", "thumb"), ("q", "71")]) != key([("preset", "thumb")]))
            #expect(try key([]) == key([("q", "70")]) && key([]) != key([("q", "80")]))
            // The query's own parameters are still refused when repeated.
            #expect(throws: ImageServerError.self) { try key([("preset", "thumb"), ("w", "5"), ("w", "6")]) }
        }
    }
}
