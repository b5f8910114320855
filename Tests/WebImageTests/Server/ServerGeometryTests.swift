import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `/img`'s geometry options (`enlarge`, `dpr`, `gravity`, `extend`, `padding`, `bg`) through a
    /// real, signing `webimage serve` process in front of a real origin: the answers are decoded and
    /// their sizes and pixels checked against test images whose parts have distinct colours.
    @Suite("Image server: geometry (process)")
    struct ServerGeometryTests {
        static let key = "geometry-test-key"
        static let signer = URLSigner(keys: [Data(key.utf8)])

        static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255], yellow: [UInt8] = [255, 255, 0]

        static let files: [String: Data] = {
            var files = SampleFiles.standard
            // 400 × 200 in quadrants: red, green above; blue, yellow below.
            files["quadrants.png"] = RawPNG(width: 400, height: 200, colorType: 2) { x, y in
                y < 100 ? (x < 200 ? red : green) : (x < 200 ? blue : yellow)
            }.encode()
            files["small.png"] = RawPNG(width: 20, height: 10, colorType: 2) { _, _ in [50, 100, 150] }.encode()
            files["clear.png"] = RawPNG(width: 20, height: 20, colorType: 6) { _, _ in [0, 0, 0, 0] }.encode()
            // White, a 40 × 30 blue box at (20, 10), and one near-white pixel at the bottom left.
            files["bordered.png"] = RawPNG(width: 100, height: 80, colorType: 2) { x, y in
                if (20..<60).contains(x), (10..<40).contains(y) { return blue }
                return x == 0 && y == 79 ? [250, 250, 250] : [255, 255, 255]
            }.encode()
            files["one.png"] = RawPNG(width: 1, height: 1, colorType: 2) { _, _ in [9, 9, 9] }.encode()
            // Grey 100 on the left half, 200 on the right.
            files["edge.png"] = RawPNG(width: 40, height: 40, colorType: 2) { x, _ in x < 20 ? [100, 100, 100] : [200, 200, 200] }.encode()
            return files
        }()

        /// A signing `webimage serve` process and the origin it reads.
        struct Serve {
            let base: String
            let origin: ImageOrigin
            let client: HTTPClient

            /// `/img` for `name` with `query` (already encoded), signed.
            func get(_ name: String, _ query: String, signed: Bool = true) async throws -> (status: Int, body: Data) {
                let path = "/img?url=\(ServerHarness.encode(origin.imageURL(name).absoluteString))" + (query.isEmpty ? "" : "&" + query)
                let reply = try await ServeProcessAttackTests.get(base + (signed ? signer.sign(path) : path), client: client)
                return (reply.status, reply.body)
            }

            /// The decoded answer, which must be a 200.
            func image(_ name: String, _ query: String) async throws -> Image {
                let reply = try await get(name, query)
                try #require(reply.status == 200, "\(name)?\(query): \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
                return try ImageCoderRegistry.default.decode(reply.body)
            }

            /// The `error` code of a JSON answer, and whether its message names `parameter`.
            func refusal(_ name: String, _ query: String, naming parameter: String) async throws -> (status: Int, code: String?, named: Bool) {
                let reply = try await get(name, query)
                let json = try? JSONDecoder().decode([String: String].self, from: reply.body)
                return (reply.status, json?["error"], json?["message"]?.contains("'\(parameter)'") == true)
            }
        }

        static func withServe(
            _ arguments: [String] = [], environment: [String: String] = [:], files: [String: Data] = files, _ body: (Serve) async throws -> Void
        ) async throws {
            try await withServe({ _ in arguments }, environment: environment, files: files, body)
        }

        /// The same, with arguments that name the origin (a watermark served by it).
        static func withServe(
            _ arguments: (ImageOrigin) -> [String], environment: [String: String] = [:], files: [String: Data] = files,
            _ body: (Serve) async throws -> Void
        ) async throws {
            try await withOrigin(files: files) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60"] + arguments(origin),
                    environment: ["WEBIMAGE_KEY": key, "WEBIMAGE_LOG_LEVEL": "error"].merging(environment) { $1 })
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                do {
                    try await body(Serve(base: "http://127.0.0.1:\(serve.port)", origin: origin, client: client))
                } catch {
                    try await client.shutdown()
                    kill(serve.process.processIdentifier, SIGTERM)
                    _ = await serve.waitForExit()
                    throw error
                }
                try await client.shutdown()
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }

        /// The straight RGB of pixel (x, y) of an opaque image, and its alpha.
        static func rgb(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
            let i = y * image.bytesPerRow + x * 4
            return Array(image.pixels[i..<i + 3])
        }

        static func alpha(_ image: Image, _ x: Int, _ y: Int) -> UInt8 { image.pixels[y * image.bytesPerRow + x * 4 + 3] }

        static func near(_ a: [UInt8], _ b: [UInt8], _ tolerance: Int = 12) -> Bool {
            zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
        }

        @Test func enlargeIsOffByDefaultAndDprMultipliesTheBox() async throws {
            try await Self.withServe { serve in
                // 20 × 10 stays 20 × 10 in every fit unless enlarge=1.
                for fit in ["inside", "cover", "fill"] {
                    let kept = try await serve.image("small.png", "w=100&h=100&fit=\(fit)&format=png")
                    #expect(kept.pixelWidth == 20 && kept.pixelHeight == 10, "\(fit)")
                }
                let cover = try await serve.image("small.png", "w=100&h=100&fit=cover&enlarge=1&format=png")
                #expect(cover.pixelWidth == 100 && cover.pixelHeight == 100)
                let inside = try await serve.image("small.png", "w=100&h=100&fit=inside&enlarge=true&format=png")
                #expect(inside.pixelWidth == 100 && inside.pixelHeight == 50)
                let fill = try await serve.image("small.png", "w=60&h=70&fit=fill&enlarge=1&format=png")
                #expect(fill.pixelWidth == 60 && fill.pixelHeight == 70)
                #expect(Self.near(Self.rgb(fill, 30, 35), [50, 100, 150], 2))
                // dpr multiplies w and h (1000 × 1000 source).
                let doubled = try await serve.image("photo.jpg", "w=100&dpr=2")
                #expect(doubled.pixelWidth == 200 && doubled.pixelHeight == 200)
                let fractional = try await serve.image("photo.jpg", "w=100&h=50&fit=cover&dpr=1.5")
                #expect(fractional.pixelWidth == 150 && fractional.pixelHeight == 75)
                // Without enlarge, dpr does not grow a small source either.
                let small = try await serve.image("small.png", "w=20&dpr=3&format=png")
                #expect(small.pixelWidth == 20)
                let grown = try await serve.image("small.png", "w=20&dpr=3&enlarge=1&format=png")
                #expect(grown.pixelWidth == 60 && grown.pixelHeight == 30)
            }
        }

        @Test func gravityPicksThePartOfTheImage() async throws {
            try await Self.withServe { serve in
                // 100 × 100 of the 400 × 200 source keeps a 200 × 200 window: which half?
                for (gravity, top, bottom) in [
                    ("we", Self.red, Self.blue), ("ea", Self.green, Self.yellow), ("nowe", Self.red, Self.blue), ("soea", Self.green, Self.yellow),
                    ("sowe", Self.red, Self.blue), ("noea", Self.green, Self.yellow), ("fp:0.9:0.5", Self.green, Self.yellow), ("fp:0:0", Self.red, Self.blue),
                ] {
                    let image = try await serve.image("quadrants.png", "w=100&h=100&fit=cover&gravity=\(gravity)&format=png")
                    #expect(image.pixelWidth == 100 && image.pixelHeight == 100, "\(gravity)")
                    for x in [2, 50, 97] {
                        #expect(Self.near(Self.rgb(image, x, 20), top), "\(gravity) at \(x): \(Self.rgb(image, x, 20))")
                        #expect(Self.near(Self.rgb(image, x, 80), bottom), "\(gravity) at \(x): \(Self.rgb(image, x, 80))")
                    }
                }
                // A focal point at x = 0.3 centres the window on x = 120: from 20 to 220, red then green.
                let focal = try await serve.image("quadrants.png", "w=100&h=100&fit=cover&gravity=fp:0.3:0.5&format=png")
                #expect(Self.near(Self.rgb(focal, 10, 20), Self.red) && Self.near(Self.rgb(focal, 97, 20), Self.green))
                // 200 × 25 keeps a 400 × 50 strip: the top, the bottom or the middle.
                let north = try await serve.image("quadrants.png", "w=200&h=25&fit=cover&gravity=no&format=png")
                #expect(Self.near(Self.rgb(north, 10, 12), Self.red) && Self.near(Self.rgb(north, 190, 12), Self.green))
                let south = try await serve.image("quadrants.png", "w=200&h=25&fit=cover&gravity=so&format=png")
                #expect(Self.near(Self.rgb(south, 10, 12), Self.blue) && Self.near(Self.rgb(south, 190, 12), Self.yellow))
                let centre = try await serve.image("quadrants.png", "w=200&h=25&fit=cover&format=png")
                #expect(Self.near(Self.rgb(centre, 10, 1), Self.red) && Self.near(Self.rgb(centre, 10, 23), Self.blue))
                let explicit = try await serve.image("quadrants.png", "w=200&h=25&fit=cover&gravity=ce&format=png")
                #expect(explicit.pixels == centre.pixels)
            }
        }

        @Test func extendPaddingAndBackground() async throws {
            try await Self.withServe { serve in
                // extend: the 20 × 10 source centred on 100 × 60 of red.
                let extended = try await serve.image("small.png", "w=100&h=60&extend=1&bg=ff0000&format=png")
                #expect(extended.pixelWidth == 100 && extended.pixelHeight == 60)
                for (x, y) in [(0, 0), (99, 0), (0, 59), (99, 59), (39, 29)] { #expect(Self.rgb(extended, x, y) == Self.red, "(\(x), \(y))") }
                #expect(Self.rgb(extended, 50, 30) == [50, 100, 150] && Self.rgb(extended, 40, 25) == [50, 100, 150])
                // × dpr, and transparent without bg.
                let retina = try await serve.image("small.png", "w=100&h=60&extend=1&dpr=2&format=png")
                #expect(retina.pixelWidth == 200 && retina.pixelHeight == 120)
                #expect(Self.alpha(retina, 0, 0) == 0 && Self.alpha(retina, 100, 60) == 255)
                // padding: one value, four values, × dpr; the corners are bg.
                let padded = try await serve.image("photo.jpg", "w=50&padding=10&bg=00ff00&format=png")
                #expect(padded.pixelWidth == 70 && padded.pixelHeight == 70)
                for (x, y) in [(0, 0), (69, 0), (0, 69), (69, 69), (9, 35), (35, 60)] { #expect(Self.rgb(padded, x, y) == Self.green, "(\(x), \(y))") }
                let sides = try await serve.image("small.png", "padding=1,2,3,4&bg=0000ff80&format=png")
                #expect(sides.pixelWidth == 20 + 2 + 4 && sides.pixelHeight == 10 + 1 + 3)
                #expect(Self.alpha(sides, 0, 0) == 128 && Self.alpha(sides, 4, 1) == 255 && Self.alpha(sides, 23, 10) == 255 && Self.alpha(sides, 24, 11) == 128)
                let scaled = try await serve.image("small.png", "padding=5&dpr=2&format=png")
                #expect(scaled.pixelWidth == 40 && scaled.pixelHeight == 30)
                // extend, then padding, on one canvas.
                let both = try await serve.image("small.png", "w=30&h=30&extend=1&padding=2&bg=ffffff&format=jpeg")
                #expect(both.pixelWidth == 34 && both.pixelHeight == 34)
                #expect(Self.near(Self.rgb(both, 0, 0), [255, 255, 255], 3) && Self.near(Self.rgb(both, 17, 17), [50, 100, 150], 6))
                // bg flattens transparency into JPEG; without it a transparent area is black, as before.
                let white = try await serve.image("clear.png", "bg=ffffff&format=jpeg")
                #expect(Self.near(Self.rgb(white, 10, 10), [255, 255, 255], 2))
                let black = try await serve.image("clear.png", "format=jpeg")
                #expect(Self.near(Self.rgb(black, 10, 10), [0, 0, 0], 2))
                // A PNG keeps its alpha: bg paints only padding and extend.
                let clear = try await serve.image("clear.png", "bg=ffffff&format=png")
                #expect(Self.alpha(clear, 10, 10) == 0)
            }
        }

        @Test func hostileGeometryIsRefusedByName() async throws {
            try await Self.withServe(["--max-output-pixels", "4000000"]) { serve in
                for (query, parameter) in [
                    ("w=10&dpr=1e308", "dpr"), ("w=10&dpr=0", "dpr"), ("w=10&dpr=-1", "dpr"), ("w=10&dpr=nan", "dpr"), ("w=10&dpr=inf", "dpr"),
                    ("w=2000&dpr=8", "dpr"), ("dpr=8.0000001", "dpr"), ("dpr=", "dpr"),
                    ("padding=99999999", "padding"), ("padding=1,2,3", "padding"), ("padding=-1", "padding"), ("padding=1,2,3,99999999999999999999", "padding"),
                    ("w=99999999&h=99999999&extend=1", "w"), ("w=10&extend=1", "extend"), ("w=10&h=10&extend=2", "extend"),
                    ("enlarge=yes", "enlarge"), ("bg=fff", "bg"), ("bg=%23ffffff", "bg"), ("bg=gggggg", "bg"),
                    ("w=10&h=10&fit=cover&gravity=smart", "gravity"), ("w=10&h=10&fit=cover&gravity=fp:2:0", "gravity"),
                    ("w=10&h=10&fit=cover&gravity=fp:0.5", "gravity"), ("w=10&h=10&fit=cover&gravity=fp:nan:0", "gravity"),
                    ("w=10&gravity=no", "gravity"),
                ] {
                    let refused = try await serve.refusal("photo.jpg", query, naming: parameter)
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "\(query): \(refused)")
                }
                // Within every parameter's range but over the output pixel limit once padded: priced, refused at once.
                let padded = try await serve.get("photo.jpg", "w=1000&padding=8192&format=png")
                #expect(padded.status == 422 && String(decoding: padded.body, as: UTF8.self).contains("output_too_large"))
                let extended = try await serve.get("small.png", "w=8192&h=8192&extend=1&format=png")
                #expect(extended.status == 422 && String(decoding: extended.body, as: UTF8.self).contains("output_too_large"))
                // Every parameter is signed: changing one breaks the signature.
                let path = "/img?url=\(ServerHarness.encode(serve.origin.imageURL("small.png").absoluteString))&padding=2"
                let signed = Self.signer.sign(path)
                #expect(try await ServeProcessAttackTests.get(serve.base + signed, client: serve.client).status == 200)
                let tampered = signed.replacingOccurrences(of: "padding=2", with: "padding=3")
                #expect(try await ServeProcessAttackTests.get(serve.base + tampered, client: serve.client).status == 403)
                #expect(try await serve.get("small.png", "bg=ff0000", signed: false).status == 403)
                // The server is still up.
                let health = try await ServeCommandTests.get(serve.base + "/health", client: serve.client)
                #expect(health.0 == 200)
            }
        }
    }
}
