import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// `/img`'s effects (`trim`, `sharpen`, `pixelate`, `blur`) and `max_bytes` through a real
    /// `webimage serve` process (``ServerGeometryTests/withServe(_:_:)``), the answers decoded.
    @Suite("Image server: effects and max_bytes (process)")
    struct ServerEffectsTests {
        typealias G = ServerGeometryTests

        @Test func trimRemovesAUniformBorderWithinTheThreshold() async throws {
            try await G.withServe { serve in
                // Threshold 10: the near-white pixel is border too, so the blue box is left.
                let box = try await serve.image("bordered.png", "trim=10&format=png")
                #expect(box.pixelWidth == 40 && box.pixelHeight == 30)
                #expect(G.rgb(box, 0, 0) == G.blue && G.rgb(box, 39, 29) == G.blue)
                // Threshold 0: the near-white pixel at (0, 79) is content, so the box reaches it.
                let exact = try await serve.image("bordered.png", "trim=0&format=png")
                #expect(exact.pixelWidth == 60 && exact.pixelHeight == 70)
                // Trimmed first, then resized.
                let resized = try await serve.image("bordered.png", "trim=10&w=20&format=png")
                #expect(resized.pixelWidth == 20 && resized.pixelHeight == 15)
                // All border, or one pixel: kept whole.
                let one = try await serve.image("one.png", "trim=0&format=png")
                #expect(one.pixelWidth == 1 && one.pixelHeight == 1 && G.rgb(one, 0, 0) == [9, 9, 9])
                let blank = try await serve.image("clear.png", "trim=255&format=png")
                #expect(blank.pixelWidth == 20 && blank.pixelHeight == 20)
                // The same processors as process= steps: the same pixels; a padding priced before any pixel work.
                let stepped = try await serve.image("bordered.png", "process=trim:10&format=png")
                #expect(stepped.pixelWidth == 40 && stepped.pixels == box.pixels)
                let padded = try await serve.get("photo.jpg", "process=padding:65535&format=png")
                #expect(padded.status == 422 && String(decoding: padded.body, as: UTF8.self).contains("output_too_large"))
                for bad in ["256", "-1", "1.5", "", "99999999999999999999"] {
                    let refused = try await serve.refusal("bordered.png", "trim=\(bad)", naming: "trim")
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "trim=\(bad)")
                }
            }
        }

        @Test func sharpenPixelateAndBlur() async throws {
            try await G.withServe { serve in
                // An unsharp mask overshoots on both sides of the edge between 100 and 200.
                let sharp = try await serve.image("edge.png", "sharpen=2&format=png")
                #expect(sharp.pixelWidth == 40)
                #expect(G.rgb(sharp, 18, 20)[0] < 95 && G.rgb(sharp, 21, 20)[0] > 205, "\(G.rgb(sharp, 18, 20)) \(G.rgb(sharp, 21, 20))")
                #expect(G.rgb(sharp, 2, 20)[0] == 100 && G.rgb(sharp, 37, 20)[0] == 200, "flat areas are unchanged")
                // Pixelate: 8 × 8 blocks, each its average (the block across the edge at x = 16–23 is 150).
                let blocks = try await serve.image("edge.png", "pixelate=8&format=png")
                #expect(G.rgb(blocks, 16, 0) == G.rgb(blocks, 23, 7) && G.near(G.rgb(blocks, 16, 0), [150, 150, 150], 1))
                #expect(G.rgb(blocks, 0, 0) == [100, 100, 100] && G.rgb(blocks, 39, 39) == [200, 200, 200])
                // A block larger than the image: one colour.
                let whole = try await serve.image("quadrants.png", "pixelate=8192&format=png")
                #expect(G.rgb(whole, 0, 0) == G.rgb(whole, 399, 199))
                // blur= is the blur:SIGMA step: without a resize, the same pixels as process=blur:3.
                let blurred = try await serve.image("edge.png", "blur=3&format=png")
                let stepped = try await serve.image("edge.png", "process=blur:3&format=png")
                #expect(blurred.pixels == stepped.pixels)
                #expect(G.rgb(blurred, 19, 20)[0] > 100 && G.rgb(blurred, 19, 20)[0] < 200)
                for (query, parameter) in [
                    ("pixelate=0", "pixelate"), ("pixelate=-3", "pixelate"), ("pixelate=99999999", "pixelate"),
                    ("sharpen=0", "sharpen"), ("sharpen=101", "sharpen"), ("sharpen=1e308", "sharpen"), ("sharpen=nan", "sharpen"),
                    ("blur=0", "blur"), ("blur=10001", "blur"), ("blur=-inf", "blur"),
                ] {
                    let refused = try await serve.refusal("edge.png", query, naming: parameter)
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "\(query): \(refused)")
                }
            }
        }

        @Test func optionsApplyToEveryFrameOfAnAnimation() async throws {
            let source = try ImageCoderRegistry.default.decode(try #require(G.files["spinner.gif"]))
            try #require(source.frames.count > 1)
            try await G.withServe { serve in
                let padded = try await serve.image("spinner.gif", "padding=2&bg=ff0000&pixelate=2&format=gif")
                #expect(padded.frames.count == source.frames.count)
                #expect(padded.pixelWidth == source.pixelWidth + 4 && padded.pixelHeight == source.pixelHeight + 4)
                #expect(G.rgb(padded, 0, 0) == G.red)
                // Each frame is trimmed on its own: an even result is served, an uneven one refused, never a 5xx.
                let trimmed = try await serve.get("spinner.gif", "trim=0&format=gif")
                #expect(trimmed.status == 200 || trimmed.status == 422, "\(trimmed.status)")
            }
        }

        @Test func maxBytesLowersTheQualityUntilTheResultFits() async throws {
            try await G.withServe { serve in
                let full = try await serve.get("photo.jpg", "w=400&format=jpeg&q=95")
                try #require(full.status == 200)
                let limit = full.body.count / 2
                let fitted = try await serve.get("photo.jpg", "w=400&format=jpeg&q=95&max_bytes=\(limit)")
                try #require(fitted.status == 200)
                #expect(fitted.body.count <= limit && fitted.body.count > limit / 4, "\(fitted.body.count) of \(limit)")
                #expect(try ImageCoderRegistry.default.decode(fitted.body).pixelWidth == 400)
                // Already small enough: written once, the same bytes as without.
                let roomy = try await serve.get("photo.jpg", "w=400&format=jpeg&q=95&max_bytes=\(full.body.count)")
                #expect(roomy.body == full.body)
                // Out of reach: the smallest try (quality 10) is answered, not an error.
                let floor = try await serve.get("photo.jpg", "w=400&format=jpeg&q=95&max_bytes=1")
                let atTen = try await serve.get("photo.jpg", "w=400&format=jpeg&q=10")
                #expect(floor.status == 200 && floor.body == atTen.body)
                // WebP too; PNG has no quality to lower and is written once.
                let webp = try await serve.get("photo.jpg", "w=400&format=webp&q=90&max_bytes=\(limit / 2)")
                #expect(webp.status == 200 && webp.body.count <= limit / 2, "\(webp.body.count)")
                let png = try await serve.get("small.png", "format=png&max_bytes=1")
                let plain = try await serve.get("small.png", "format=png")
                #expect(png.status == 200 && png.body == plain.body)
                for bad in ["0", "-5", "1073741825", "1e6", "99999999999999999999"] {
                    let refused = try await serve.refusal("photo.jpg", "max_bytes=\(bad)", naming: "max_bytes")
                    #expect(refused.status == 400 && refused.code == "bad_parameter" && refused.named, "max_bytes=\(bad)")
                }
            }
        }
    }
}
