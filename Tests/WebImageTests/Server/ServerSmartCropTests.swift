import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `gravity=sm` (the smart crop of `fit=cover`) and `extend=1:GRAVITY` through a real,
    /// signing `webimage serve` process (``ServerGeometryTests/withServe(_:environment:files:_:)``):
    /// the crop must hold the one salient object of a test picture, the padded canvas must put
    /// the image where the gravity says, and every new value is signed, keyed and range-checked.
    @Suite("Image server: smart crop and extend gravity (process)")
    struct ServerSmartCropTests {
        typealias Geometry = ServerGeometryTests

        /// 400 × 200 of grey noise with a 40 × 40 red-and-yellow checked object at (330, 130).
        static let files: [String: Data] = {
            var files = Geometry.files
            files["object.png"] = RawPNG(width: 400, height: 200, colorType: 2) { x, y in
                if (330..<370).contains(x), (130..<170).contains(y) { return (x / 5 + y / 5) % 2 == 0 ? [230, 20, 20] : [250, 220, 0] }
                let v = UInt8(90 + SmartCropTests.noise(x, y) / 4)
                return [v, v, v]
            }.encode()
            return files
        }()

        /// How many pixels of `image` are the object's red or yellow.
        static func objectPixels(_ image: Image) -> Int {
            stride(from: 0, to: image.pixels.count, by: 4).filter { image.pixels[$0] > 200 && image.pixels[$0 + 2] < 60 }.count
        }

        @Test func smartGravityCropsToTheObject() async throws {
            try await Geometry.withServe(files: Self.files) { serve in
                // 100 × 100 keeps a 200 × 200 window: the centre one misses the object, sm holds it.
                let smart = try await serve.image("object.png", "w=100&h=100&fit=cover&gravity=sm&format=png")
                #expect(smart.pixelWidth == 100 && smart.pixelHeight == 100)
                // The object is 20 × 20 at this scale: 400 pixels, a few blended at its edges.
                #expect(Self.objectPixels(smart) >= 300, "\(Self.objectPixels(smart))")
                let centre = try await serve.image("object.png", "w=100&h=100&fit=cover&format=png")
                #expect(Self.objectPixels(centre) == 0)
                // With dpr and enlarge the window is still the object's.
                let retina = try await serve.image("object.png", "w=100&h=100&fit=cover&gravity=sm&dpr=2&format=png")
                #expect(retina.pixelWidth == 200 && Self.objectPixels(retina) >= 1200, "\(Self.objectPixels(retina))")
                // An animation keeps one window for every frame: the centre (as gravity=ce).
                let moving = try await serve.get("bounce.webp", "w=60&h=60&fit=cover&gravity=sm&format=webp")
                let steady = try await serve.get("bounce.webp", "w=60&h=60&fit=cover&gravity=ce&format=webp")
                #expect(moving.status == 200 && moving.body == steady.body)
                #expect(try ImageCoderRegistry.default.decode(moving.body).frameCount == 5)
            }
        }

        @Test func extendPlacesTheImageWhereTheGravitySays() async throws {
            try await Geometry.withServe(files: Self.files) { serve in
                // small.png is 20 × 10 of (50, 100, 150), on a 100 × 60 red canvas.
                let inside: [UInt8] = [50, 100, 150]
                for (gravity, corner, outside) in [
                    ("nowe", (0, 0), (99, 59)), ("soea", (99, 59), (0, 0)), ("no", (50, 0), (50, 59)), ("we", (0, 30), (99, 30)),
                    ("fp:1:0", (99, 0), (0, 59)), ("ce", (50, 30), (0, 0)),
                ] {
                    let image = try await serve.image("small.png", "w=100&h=60&extend=1:\(gravity)&bg=ff0000&format=png")
                    #expect(image.pixelWidth == 100 && image.pixelHeight == 60, "\(gravity)")
                    #expect(Geometry.rgb(image, corner.0, corner.1) == inside, "\(gravity): \(Geometry.rgb(image, corner.0, corner.1))")
                    #expect(Geometry.rgb(image, outside.0, outside.1) == Geometry.red, "\(gravity)")
                }
                // imgproxy's offsets (`1:GRAVITY:X:Y`): inwards from a compass point's edges, right
                // and down from the centre, × dpr, never past the canvas (the 20 × 10 image's top
                // left corner at `at`, the pixel before it red).
                for (placement, at, query) in [
                    ("nowe:5:7", (5, 7), ""), ("soea:5:7", (75, 43), ""), ("ce:-10:4", (30, 29), ""), ("no:0:3", (40, 3), ""),
                    ("nowe:1000:1000", (80, 50), ""), ("soea:-1000:-1000", (80, 50), ""), ("nowe:5:7", (10, 14), "&dpr=2"),
                ] {
                    let image = try await serve.image("small.png", "w=100&h=60&extend=1:\(placement)&bg=ff0000&format=png\(query)")
                    #expect(Geometry.rgb(image, at.0, at.1) == inside && Geometry.rgb(image, at.0 + 19, at.1 + 9) == inside, "\(placement)\(query)")
                    if at.0 > 0 { #expect(Geometry.rgb(image, at.0 - 1, at.1) == Geometry.red, "\(placement)\(query)") }
                    if at.1 > 0 { #expect(Geometry.rgb(image, at.0, at.1 - 1) == Geometry.red, "\(placement)\(query)") }
                }
                // extend=1:ce is extend=1.
                let plain = try await serve.get("small.png", "w=100&h=60&extend=1&format=png")
                let centred = try await serve.get("small.png", "w=100&h=60&extend=1:ce&format=png")
                #expect(plain.status == 200 && plain.body == centred.body)
            }
        }

        @Test func newValuesAreCheckedSignedAndKeyed() async throws {
            try await Geometry.withServe(files: Self.files) { serve in
                for (query, parameter) in [
                    ("w=10&h=10&gravity=sm", "gravity"), ("w=10&h=10&fit=fill&gravity=sm", "gravity"), ("w=10&h=10&fit=cover&gravity=SM", "gravity"),
                    ("w=10&h=10&extend=0:no", "extend"), ("w=10&h=10&extend=1:sm", "extend"), ("w=10&h=10&extend=1:", "extend"),
                    ("w=10&h=10&extend=1:fp:2:0", "extend"), ("w=10&h=10&extend=yes:no", "extend"),
                    ("w=10&h=10&extend=1:no:5", "extend"), ("w=10&h=10&extend=1:no:a:0", "extend"), ("w=10&h=10&extend=1:no:5:5:5", "extend"),
                    ("w=10&h=10&extend=1:no:99999999999999999999:0", "extend"), ("w=10&h=10&extend=1:no:0:-8193", "extend"),
                    ("w=10&h=10&extend=1:fp:0.5:0.5:3:3", "extend"), ("w=10&h=10&extend=1:sm:1:1", "extend"), ("w=10&h=10&extend=1::1:1", "extend"),
                    ("w=10&extend=1:no", "extend"),
                ] {
                    let refused = try await serve.refusal("small.png", query, naming: parameter)
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "\(query): \(refused)")
                }
                // Signed: sm and a gravity of extend cannot be swapped in.
                let path = "/img?url=\(ServerHarness.encode(serve.origin.imageURL("object.png").absoluteString))&w=10&h=10&fit=cover&gravity=ce&extend=1"
                let signed = Geometry.signer.sign(path)
                #expect(try await ServeProcessAttackTests.get(serve.base + signed, client: serve.client).status == 200)
                for (from, to) in [("gravity=ce", "gravity=sm"), ("extend=1", "extend=1:no"), ("extend=1", "extend=1:ce:1:0")] {
                    let tampered = signed.replacingOccurrences(of: from, with: to)
                    #expect(try await ServeProcessAttackTests.get(serve.base + tampered, client: serve.client).status == 403, "\(to)")
                }
            }
            // Keyed: each new value has its own result-cache key (and so its own ETag).
            func key(_ query: [(String, String)]) throws -> String {
                try ImageParameters(query: [("url", "http://images.test/a.jpg"), ("w", "10"), ("h", "10")] + query, maxSide: 8192).cacheKey(negotiated: "png")
            }
            let cover = [("fit", "cover")]
            #expect(try key(cover + [("gravity", "sm")]) != key(cover + [("gravity", "ce")]))
            #expect(try key(cover + [("gravity", "sm")]) == key(cover + [("gravity", "sm")]))
            #expect(try key([("extend", "1:no")]) != key([("extend", "1")]) && key([("extend", "1:no")]) != key([("extend", "1:so")]))
            #expect(try key([("extend", "1:ce")]) == key([("extend", "1")]))
            #expect(try key([("extend", "1:no:5:5")]) != key([("extend", "1:no")]) && key([("extend", "1:no:5:5")]) != key([("extend", "1:no:5:6")]))
            #expect(try key([("extend", "1:ce:0:0")]) == key([("extend", "1")]) && key([("extend", "1:ce:2:0")]) != key([("extend", "1")]))
        }
    }
}
