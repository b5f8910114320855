import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// `serve --watermark PATH` and `/img?wm=OPACITY[:POSITION[:X:Y[:SCALE]]]` through a real, signing
    /// `webimage serve` process (``ServerGeometryTests/withServe(_:environment:files:_:)``): the blend
    /// checked against Pillow's `Image.alpha_composite` of the same inputs, placement, scale and
    /// repetition by pixels, keys by `ETag` and `X-Cache`, hostile values refused by name.
    @Suite("Image server: watermark (process)")
    struct ServerWatermarkTests {
        typealias G = ServerGeometryTests

        /// 64 × 48, a gradient, opaque on the left half and alpha 160 on the right.
        static let base = RawPNG(width: 64, height: 48, colorType: 6) { x, y in [UInt8(x * 4), UInt8(y * 5), 128, x < 32 ? 255 : 160] }.encode()
        /// 20 × 16, alpha from 0 (two left columns) up to 255.
        static let mark = RawPNG(width: 20, height: 16, colorType: 6) { x, y in
            [200, UInt8(x * 12), UInt8(y * 15), x < 2 ? 0 : UInt8(min(255, 60 + (x + y) * 8))]
        }.encode()
        /// 10 × 6 opaque red, and 100 × 60 white.
        static let red = RawPNG(width: 10, height: 6, colorType: 2) { _, _ in [255, 0, 0] }.encode()
        static let white = RawPNG(width: 100, height: 60, colorType: 2) { _, _ in [255, 255, 255] }.encode()

        static func withMark(_ mark: Data, _ arguments: [String] = [], _ body: (G.Serve) async throws -> Void) async throws {
            let file = temporaryDirectory().appendingPathComponent("watermark.png")
            try mark.write(to: file)
            var files = G.files
            files["base.png"] = base
            files["white.png"] = white
            try await G.withServe(["--watermark", file.path] + arguments, files: files, body)
        }

        /// Pillow: the watermark's alpha × opacity, pasted where imgproxy places it (or tiled),
        /// then `Image.alpha_composite(base, layer)`.
        static let pillow = """
            import sys
            from PIL import Image
            base = Image.open(sys.argv[1]).convert("RGBA"); mark = Image.open(sys.argv[2]).convert("RGBA")
            op, pos, x, y = float(sys.argv[4]), sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
            mark.putalpha(mark.getchannel("A").point(lambda v: int(v * op + 0.5)))
            W, H = base.size; w, h = mark.size
            layer = Image.new("RGBA", base.size, (0, 0, 0, 0))
            if pos == "re":
                for top in range(0, H, h + y):
                    for left in range(0, W, w + x):
                        layer.paste(mark, (left, top))
            else:
                left = x if pos.endswith("we") else W - w - x if pos.endswith("ea") else (W - w) // 2 + x
                top = y if pos.startswith("no") else H - h - y if pos.startswith("so") else (H - h) // 2 + y
                layer.paste(mark, (left, top))
            Image.alpha_composite(base, layer).save(sys.argv[3])
            """

        @Test func theBlendMatchesPillowsAlphaComposite() async throws {
            let directory = temporaryDirectory()
            let basePath = directory.appendingPathComponent("base.png").path, markPath = directory.appendingPathComponent("mark.png").path
            try Self.base.write(to: URL(fileURLWithPath: basePath))
            try Self.mark.write(to: URL(fileURLWithPath: markPath))
            try await Self.withMark(Self.mark) { serve in
                for (opacity, position, x, y) in [("1", "nowe", 5, 7), ("0.6", "soea", 3, 2), ("0.8", "re", 4, 2), ("0.45", "ce", -10, 6), ("1", "ea", 0, 0), ("0.3", "so", 0, -4)] {
                    let ours = try await serve.image("base.png", "format=png&wm=\(opacity):\(position):\(x):\(y)")
                    let output = directory.appendingPathComponent("pillow-\(position).png").path
                    let result = try await WebImageCommand.run(
                        ["python3", "-c", Self.pillow, basePath, markPath, output, opacity, position, String(x), String(y)],
                        program: URL(fileURLWithPath: "/usr/bin/env"))
                    try #require(result.status == 0, "\(result.stderr)")
                    let reference = try ImageCoderRegistry.default.decode(try Data(contentsOf: URL(fileURLWithPath: output)))
                    try #require(ours.pixelWidth == 64 && ours.pixelHeight == 48 && reference.pixelWidth == 64)
                    // Both premultiplied by the same decoder: the largest difference of any channel.
                    var worst = 0, changed = 0
                    for y in 0..<48 {
                        for i in 0..<(64 * 4) {
                            let a = Int(ours.pixels[y * ours.bytesPerRow + i]), b = Int(reference.pixels[y * reference.bytesPerRow + i])
                            worst = max(worst, abs(a - b))
                        }
                    }
                    let plain = try await serve.image("base.png", "format=png")
                    for i in 0..<min(plain.pixels.count, ours.pixels.count) where plain.pixels[i] != ours.pixels[i] { changed += 1 }
                    print("watermark-vs-pillow \(opacity):\(position) largest difference \(worst)")
                    #expect(worst <= 3, "\(opacity):\(position): largest difference from Pillow \(worst)")
                    #expect(changed > 100, "\(opacity):\(position): the watermark changed \(changed) bytes")
                }
            }
        }

        @Test func positionOffsetsScaleAndRepetition() async throws {
            try await Self.withMark(Self.red) { serve in
                func isRed(_ image: Image, _ x: Int, _ y: Int) -> Bool { G.near(G.rgb(image, x, y), G.red, 2) }
                func isWhite(_ image: Image, _ x: Int, _ y: Int) -> Bool { G.near(G.rgb(image, x, y), [255, 255, 255], 2) }
                let corner = try await serve.image("white.png", "format=png&wm=1:nowe")
                #expect(isRed(corner, 0, 0) && isRed(corner, 9, 5) && isWhite(corner, 10, 0) && isWhite(corner, 0, 6))
                // 5 pixels from the right and bottom edges: columns 85–94, rows 49–54.
                let offset = try await serve.image("white.png", "format=png&wm=1:soea:5:5")
                #expect(isRed(offset, 85, 49) && isRed(offset, 94, 54) && isWhite(offset, 95, 54) && isWhite(offset, 84, 49) && isWhite(offset, 94, 55))
                let centre = try await serve.image("white.png", "format=png&wm=1")
                #expect(isRed(centre, 45, 27) && isRed(centre, 54, 32) && isWhite(centre, 44, 27) && isWhite(centre, 55, 33))
                // Partly outside: clipped; wholly outside: nothing drawn (the same pixels as without).
                let clipped = try await serve.image("white.png", "format=png&wm=1:nowe:-5:-3")
                #expect(isRed(clipped, 0, 0) && isRed(clipped, 4, 2) && isWhite(clipped, 5, 0) && isWhite(clipped, 0, 3))
                let plain = try await serve.image("white.png", "format=png")
                for outside in ["1:we:-50:0", "1:ea:-10:0", "1:no:0:-6", "1:soea:100:60", "1:ce:8192:0"] {
                    let image = try await serve.image("white.png", "format=png&wm=\(outside)")
                    #expect(image.pixels == plain.pixels, "\(outside)")
                }
                // Tiles every 10 + 10 pixels across and 6 + 4 down.
                let tiled = try await serve.image("white.png", "format=png&wm=1:re:10:4")
                #expect(isRed(tiled, 0, 0) && isWhite(tiled, 12, 0) && isRed(tiled, 20, 10) && isRed(tiled, 85, 55) && isWhite(tiled, 95, 55) && isWhite(tiled, 5, 7))
                // Scale 0.5 of 100 × 60: the 10 × 6 mark enlarged to 50 × 30.
                let scaled = try await serve.image("white.png", "format=png&wm=1:nowe:0:0:0.5")
                #expect(isRed(scaled, 49, 29) && isWhite(scaled, 50, 0) && isWhite(scaled, 0, 30))
                // Half opacity: red over white.
                let faded = try await serve.image("white.png", "format=png&wm=0.5:nowe")
                #expect(G.near(G.rgb(faded, 3, 3), [255, 128, 128], 2), "\(G.rgb(faded, 3, 3))")
                // After the resize and the padding, on the final canvas; flattened into JPEG.
                let padded = try await serve.image("white.png", "format=jpeg&w=50&padding=5&bg=0000ff&wm=1:nowe")
                #expect(padded.pixelWidth == 60 && G.near(G.rgb(padded, 2, 2), G.red, 30) && G.near(G.rgb(padded, 59, 39), G.blue, 30))
                // Every frame of an animation.
                let animated = try await serve.image("spinner.gif", "format=gif&wm=1:nowe")
                #expect(animated.frames.count > 1 && animated.frames.allSatisfy { $0.pixels[0] > 200 && $0.pixels[1] < 50 })
            }
        }

        @Test func theWatermarkIsKeyedAndZeroOpacityIsNone() async throws {
            try await Self.withMark(Self.red, ["--preset", "marked=wm:0.5:soea"]) { serve in
                typealias P = ServerPresetTests
                let plain = try await P.fetch(serve, "white.png", "format=png")
                let none = try await P.fetch(serve, "white.png", "format=png&wm=0:soea:3:3")
                #expect(none.cache == "hit-memory" && none.etag == plain.etag)
                let marked = try await P.fetch(serve, "white.png", "format=png&wm=0.5:soea:0:0:0")
                #expect(marked.cache == "miss" && marked.etag != plain.etag)
                let preset = try await P.fetch(serve, "white.png", "format=png&preset=marked")
                #expect(preset.cache == "hit-memory" && preset.etag == marked.etag)
                for other in ["wm=0.5:soea:1:0", "wm=0.51:soea", "wm=0.5:sowe", "wm=0.5:soea:0:0:0.5"] {
                    let reply = try await P.fetch(serve, "white.png", "format=png&" + other)
                    #expect(reply.status == 200 && reply.cache == "miss" && reply.etag != marked.etag, "\(other)")
                }
            }
        }

        /// The scaled watermark and its faded copy are priced with the render (``RenderBudget``): a
        /// watermark scaled to a large result can take it over the memory budget, refused at once.
        @Test func aScaledWatermarkIsPriced() async throws {
            try await Self.withMark(Self.red, ["--memory-budget-mb", "16"]) { serve in
                // 1000 × 1000: about 12 MB without the watermark, or with it at its own 10 × 6 size;
                // scaled to the whole result it holds 12 MB more.
                let large = "process=resize:1000x1000:exact:upscale&format=jpeg"
                let plain = try await serve.get("white.png", large)
                #expect(plain.status == 200, "\(String(decoding: plain.body.prefix(200), as: UTF8.self))")
                let small = try await serve.get("white.png", large + "&wm=1:nowe")
                #expect(small.status == 200, "\(String(decoding: small.body.prefix(200), as: UTF8.self))")
                let scaled = try await serve.get("white.png", large + "&wm=1:nowe:0:0:1")
                let message = String(decoding: scaled.body, as: UTF8.self)
                #expect(scaled.status == 422 && message.contains("output_too_large") && message.contains("memory budget"), "\(scaled.status) \(message)")
            }
        }

        @Test func hostileValuesAndAMissingWatermarkAreRefused() async throws {
            try await Self.withMark(Self.red) { serve in
                for bad in [
                    "2", "-0.1", "nan", "inf", "1e308", "", "0.5:", "0.5:xx", "0.5:ce:1", "0.5::0:0", "0.5:ce:9000:0", "0.5:ce:0:-9000",
                    "0.5:ce:99999999999999999999:0", "0.5:re:-1:0", "0.5:ce:0:0:2", "0.5:ce:0:0:-1", "0.5:ce:0:0:nan", "0.5:ce:0:0:0:0",
                    String(repeating: "0", count: 200),
                ] {
                    let refused = try await serve.refusal("white.png", "wm=\(ServerHarness.encode(bad))", naming: "wm")
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "wm=\(bad): \(refused)")
                }
            }
            try await G.withServe { serve in
                let refused = try await serve.refusal("photo.jpg", "wm=0.5", naming: "wm")
                #expect(refused.status == 400 && refused.named, "no --watermark: \(refused)")
            }
            // A watermark that cannot be used stops the server at start.
            let text = temporaryDirectory().appendingPathComponent("notes.png")
            try Data("not an image".utf8).write(to: text)
            let huge = temporaryDirectory().appendingPathComponent("huge.png")
            try Data(count: ServerWatermark.maxBytes + 1).write(to: huge)
            for (path, message) in [("/nonexistent/mark.png", "cannot read the watermark file"), (text.path, "cannot be decoded"), (huge.path, "over the limit")] {
                let result = try await WebImageCommand.run(["serve", "--port", "0", "--watermark", path])
                #expect(result.status == 64 && result.stderr.contains(message), "\(path): \(result.status) \(result.stderr)")
            }
        }
    }
}
