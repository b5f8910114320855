import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// `serve --watermark NAME=PATH` (repeatable, beside the default `--watermark PATH`) and
    /// `/img?wm=NAME[:OPACITY[:POSITION…]]` through a real `webimage serve` process: the named
    /// image is the one drawn, each name is its own cache entry, an unknown or malformed name
    /// is a 400 naming `wm`, and a preset naming a missing watermark stops the server at start.
    @Suite("Image server: named watermarks (process)")
    struct ServerNamedWatermarkTests {
        typealias G = ServerGeometryTests
        typealias W = ServerWatermarkTests
        /// 10 × 6 opaque blue.
        static let blue = RawPNG(width: 10, height: 6, colorType: 2) { _, _ in [0, 0, 255] }.encode()

        static func withMarks(_ arguments: [String] = [], _ body: (G.Serve) async throws -> Void) async throws {
            let directory = temporaryDirectory()
            let red = directory.appendingPathComponent("red.png"), blue = directory.appendingPathComponent("blue.png")
            try W.red.write(to: red)
            try Self.blue.write(to: blue)
            var files = G.files
            files["white.png"] = W.white
            try await G.withServe(["--watermark", red.path, "--watermark", "blue=\(blue.path)", "--watermark", "red-2=\(red.path)"] + arguments,
                                  files: files, body)
        }

        @Test func theNamedImageIsDrawnWhereAskedAndTheDefaultStays() async throws {
            try await Self.withMarks { serve in
                let blueCorner = try await serve.image("white.png", "format=png&wm=blue:1:nowe")
                #expect(G.near(G.rgb(blueCorner, 0, 0), G.blue, 2) && G.near(G.rgb(blueCorner, 10, 0), [255, 255, 255], 2))
                // The name alone: full opacity, centred (columns 45–54, rows 27–32).
                let blueCentre = try await serve.image("white.png", "format=png&wm=blue")
                #expect(G.near(G.rgb(blueCentre, 45, 27), G.blue, 2) && G.near(G.rgb(blueCentre, 44, 27), [255, 255, 255], 2))
                let faded = try await serve.image("white.png", "format=png&wm=blue:0.5:soea:0:0")
                #expect(G.near(G.rgb(faded, 99, 59), [128, 128, 255], 2), "\(G.rgb(faded, 99, 59))")
                // No name: the default (red); a name for the same file draws the same pixels.
                let redCorner = try await serve.image("white.png", "format=png&wm=1:nowe")
                #expect(G.near(G.rgb(redCorner, 0, 0), G.red, 2))
                let named = try await serve.image("white.png", "format=png&wm=red-2:1:nowe")
                #expect(named.pixels == redCorner.pixels)
            }
        }

        @Test func eachNameIsItsOwnEntry() async throws {
            try await Self.withMarks { serve in
                typealias P = ServerPresetTests
                let blue = try await P.fetch(serve, "white.png", "format=png&wm=blue:1:nowe")
                let red = try await P.fetch(serve, "white.png", "format=png&wm=1:nowe")
                let redNamed = try await P.fetch(serve, "white.png", "format=png&wm=red-2:1:nowe")
                #expect(blue.status == 200 && red.status == 200 && redNamed.status == 200)
                #expect(blue.cache == "miss" && red.cache == "miss" && redNamed.cache == "miss")
                #expect(Set([blue.etag, red.etag, redNamed.etag]).count == 3, "the name is part of the key, beside the image's digest")
                let again = try await P.fetch(serve, "white.png", "format=png&wm=blue:1:nowe")
                #expect(again.cache == "hit-memory" && again.etag == blue.etag)
                // `wm=blue` is `wm=blue:1:ce:0:0:0`: one entry.
                let short = try await P.fetch(serve, "white.png", "format=png&wm=blue")
                let long = try await P.fetch(serve, "white.png", "format=png&wm=blue:1:ce:0:0:0")
                #expect(long.cache == "hit-memory" && long.etag == short.etag)
            }
        }

        @Test func unknownAndMalformedNamesAreRefused() async throws {
            try await Self.withMarks { serve in
                for bad in ["green", "green:1", "Blue", "blue!", "blue:2", "blue:1:xx", "b" + String(repeating: "x", count: 32), "blue:blue", "1blue", "_blue"] {
                    let refused = try await serve.refusal("white.png", "wm=\(ServerHarness.encode(bad))", naming: "wm")
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "wm=\(bad): \(refused)")
                }
            }
            // A preset may name only a watermark the server has; a name given twice is refused.
            let mark = temporaryDirectory().appendingPathComponent("mark.png")
            try W.red.write(to: mark)
            for (arguments, message) in [
                (["--watermark", "logo=\(mark.path)", "--preset", "p=wm:other:0.5"], "no watermark of this server"),
                (["--watermark", "logo=\(mark.path)", "--watermark", "logo=\(mark.path)"], "given twice"),
                (["--watermark", mark.path, "--watermark", mark.path], "one default watermark"),
                (["--watermark", "logo=/nonexistent/mark.png"], "cannot read the watermark file"),
            ] {
                let result = try await WebImageCommand.run(["serve", "--port", "0"] + arguments)
                #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
            }
        }

        /// `--watermark NAME=URL` (and a default one by URL): downloaded once at start, before
        /// the server listens, and drawn as the same file given by path is; a URL that cannot
        /// be downloaded stops the server with 69, one that is not an image with 64.
        @Test func watermarksCanComeFromURLs() async throws {
            var files = G.files
            files["white.png"] = W.white
            files["blue.png"] = Self.blue
            files["red.png"] = W.red
            let path = temporaryDirectory().appendingPathComponent("blue.png")
            try Self.blue.write(to: path)
            try await G.withServe({ origin in
                ["--watermark", "blue=\(origin.imageURL("blue.png"))", "--watermark", origin.imageURL("red.png").absoluteString,
                 "--watermark", "local=\(path.path)", "--preset", "marked=wm:blue:1:nowe"]
            }, files: files) { serve in
                let fromURL = try await serve.image("white.png", "format=png&wm=blue:1:nowe")
                let fromPath = try await serve.image("white.png", "format=png&wm=local:1:nowe")
                #expect(G.near(G.rgb(fromURL, 0, 0), G.blue, 2) && fromURL.pixels == fromPath.pixels)
                let preset = try await serve.image("white.png", "format=png&preset=marked")
                #expect(preset.pixels == fromURL.pixels)
                let byDefault = try await serve.image("white.png", "format=png&wm=1:nowe")
                #expect(G.near(G.rgb(byDefault, 0, 0), G.red, 2))
                #expect(serve.origin.requestCount(path: "/images/blue.png") == 1, "downloaded once, at start")
            }
            try await withOrigin(files: ["page.html": Data("<html></html>".utf8)]) { origin in
                for (arguments, status, message) in [
                    (["--watermark", "logo=http://127.0.0.1:9/mark.png"], Int32(69), "cannot download it"),
                    (["--watermark", "logo=\(origin.imageURL("missing.png"))"], 69, "cannot download it"),
                    (["--watermark", "logo=\(origin.imageURL("page.html"))"], 64, "cannot be decoded"),
                    (["--watermark", "logo=\(origin.imageURL("a.png"))", "--watermark", "logo=\(path.path)"], 64, "given twice"),
                ] {
                    let result = try await WebImageCommand.run(["serve", "--port", "0"] + arguments)
                    #expect(result.status == status && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
                }
            }
        }

        /// The parser alone: names, the opacity a name alone implies, and the identifier.
        @Test func theParameterParsesNamesStrictly() throws {
            func wm(_ text: String) throws(ImageServerError) -> ImageParameters.WatermarkOptions? {
                try ImageParameters(query: [("url", "http://127.0.0.1/a.png"), ("wm", text)], maxSide: 8192).watermark
            }
            #expect(try wm("logo")?.name == "logo" && wm("logo")?.opacity == 1 && wm("logo")?.position == .center)
            let full = try #require(try wm("logo_2-b:0.25:sowe:3:4:0.5"))
            #expect(full.name == "logo_2-b" && full.opacity == 0.25 && full.position == .southWest && full.x == 3 && full.y == 4 && full.scale == 0.5)
            #expect(try wm("logo:0") == nil, "opacity 0 is no watermark, named or not")
            #expect(try wm("0.5")?.name == nil)
            #expect(ImageParameters.WatermarkOptions.isValidName("a") && !ImageParameters.WatermarkOptions.isValidName("é"))
        }
    }
}
