import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `GET /img`: every parameter, format negotiation and the caching headers, against a real
    /// server and a real origin on 127.0.0.1.
    @Suite("Image server: parameters and responses")
    struct ServerParameterTests {
        static func decode(_ reply: ServerHarness.Reply) throws -> Image {
            try ImageCoderRegistry.default.decode(reply.body)
        }

        @Test func widthKeepsAspectAndSetsHeaders() async throws {
            try await withImageServer { harness in
                let reply = try await harness.image("landscape.jpg", [("w", "320")])
                #expect(reply.status == 200)
                #expect(reply.header("content-type") == "image/jpeg")
                #expect(reply.header("content-length") == String(reply.body.count))
                #expect(reply.header("cache-control") == "public, max-age=31536000")
                #expect(reply.header("vary") == "Accept")
                let etag = try #require(reply.header("etag"))
                #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
                let image = try Self.decode(reply)
                #expect(image.format == .jpeg && image.pixelWidth == 320 && image.pixelHeight == 180)
            }
        }

        @Test func heightAndInsideNeverEnlarge() async throws {
            try await withImageServer { harness in
                let tall = try Self.decode(try await harness.image("photo.jpg", [("h", "100")]))
                #expect(tall.pixelWidth == 100 && tall.pixelHeight == 100)
                let box = try Self.decode(try await harness.image("landscape.jpg", [("w", "300"), ("h", "300"), ("fit", "inside")]))
                #expect(box.pixelWidth == 300 && (168...169).contains(box.pixelHeight))
                let small = try Self.decode(try await harness.image("small.jpg", [("w", "1000")]))
                #expect(small.pixelWidth == 120 && small.pixelHeight == 80)
            }
        }

        @Test func coverAndFillGiveExactSizes() async throws {
            try await withImageServer { harness in
                let cover = try Self.decode(try await harness.image("landscape.jpg", [("w", "200"), ("h", "200"), ("fit", "cover")]))
                #expect(cover.pixelWidth == 200 && cover.pixelHeight == 200)
                let fill = try Self.decode(try await harness.image("photo.jpg", [("w", "300"), ("h", "50"), ("fit", "fill")]))
                #expect(fill.pixelWidth == 300 && fill.pixelHeight == 50)
            }
        }

        @Test func explicitFormatsAndQuality() async throws {
            try await withImageServer { harness in
                for (format, mime) in [("png", "image/png"), ("webp", "image/webp"), ("avif", "image/avif"), ("gif", "image/gif"), ("jpeg", "image/jpeg")] {
                    let reply = try await harness.image("photo.jpg", [("w", "64"), ("format", format)])
                    #expect(reply.status == 200, "\(format)")
                    #expect(reply.header("content-type") == mime)
                    #expect(reply.header("vary") == nil, "a fixed format does not vary")
                    #expect(ImageFormat(sniffing: reply.body)?.mimeType == mime)
                }
                let low = try await harness.image("photo.jpg", [("w", "400"), ("format", "jpeg"), ("q", "10")])
                let high = try await harness.image("photo.jpg", [("w", "400"), ("format", "jpeg"), ("q", "95")])
                #expect(low.body.count * 2 < high.body.count)
            }
        }

        @Test func processUsesTheSpecGrammar() async throws {
            try await withImageServer { harness in
                let rotated = try Self.decode(try await harness.image("landscape.jpg", [("w", "160"), ("process", "rotate:90"), ("format", "png")]))
                // Processing runs first, then the resize: the turned 900 × 1600 picture fits 160 wide.
                #expect(rotated.pixelWidth == 160 && (284...285).contains(rotated.pixelHeight))
                let gray = try Self.decode(try await harness.image("opaque.png", [("process", "grayscale"), ("format", "png")]))
                let index = (gray.pixelHeight / 2 * gray.pixelWidth + gray.pixelWidth / 2) * 4
                #expect(gray.pixels[index] == gray.pixels[index + 1] && gray.pixels[index + 1] == gray.pixels[index + 2])
            }
        }

        @Test func autoFormatFollowsAccept() async throws {
            try await withImageServer { harness in
                let avif = try await harness.image("photo.jpg", [("w", "64")], headers: [("Accept", "image/avif,image/webp,*/*")])
                #expect(avif.header("content-type") == "image/avif" && avif.header("vary") == "Accept")
                let webp = try await harness.image("photo.jpg", [("w", "64")], headers: [("Accept", "image/webp,*/*;q=0.8")])
                #expect(webp.header("content-type") == "image/webp")
                let notAvif = try await harness.image("photo.jpg", [("w", "64")], headers: [("Accept", "image/avif;q=0, image/webp")])
                #expect(notAvif.header("content-type") == "image/webp")
                for zero in ["q=0.0", "q=0.000", "Q = 0."] {
                    let refused = try await harness.image("photo.jpg", [("w", "64")], headers: [("Accept", "image/avif;\(zero), image/webp")])
                    #expect(refused.header("content-type") == "image/webp", "\(zero)")
                }
                let jpeg = try await harness.image("photo.jpg", [("w", "64")], headers: [("Accept", "image/*")])
                #expect(jpeg.header("content-type") == "image/jpeg")
                let png = try await harness.image("logo.png", [("w", "64")])
                #expect(png.header("content-type") == "image/png")
                let fromWebP = try await harness.image("photo.webp", [("w", "64")])
                #expect(fromWebP.header("content-type") == "image/jpeg", "an opaque WebP without Accept becomes a JPEG")
                #expect(avif.header("etag") != webp.header("etag"))
            }
        }

        /// An error under `format=auto` varies by Accept as the image would (a shared cache kept an
        /// AVIF-only failure for browsers that never asked for AVIF); a fixed format's does not.
        @Test func errorsUnderAutoFormatVaryByAccept() async throws {
            try await withImageServer { harness in
                let auto = try await harness.image("missing.jpg", [("w", "64")], headers: [("Accept", "image/avif,*/*")])
                #expect(auto.status == 404 && auto.header("vary") == "Accept")
                let fixed = try await harness.image("missing.jpg", [("w", "64"), ("format", "png")])
                #expect(fixed.status == 404 && fixed.header("vary") == nil)
            }
        }

        @Test func animationsStayAnimatedWhereTheFormatAllows() async throws {
            try await withImageServer { harness in
                let gif = try Self.decode(try await harness.image("spinner.gif", [("w", "48")]))
                #expect(gif.format == .gif && gif.frames.count == 6 && gif.pixelWidth == 48)
                let webp = try Self.decode(try await harness.image("spinner.gif", [("w", "48")], headers: [("Accept", "image/avif,image/webp")]))
                #expect(webp.format == .webp && webp.frames.count == 6, "an animated source prefers WebP over AVIF")
                // An animated PNG stays one without a modern format accepted (not a 256-colour GIF).
                let apng = try await harness.image("bounce.png", [("w", "60")])
                #expect(apng.header("content-type") == "image/apng")
                let apngImage = try Self.decode(apng)
                #expect(apngImage.format == .apng && apngImage.frames.count == 5 && apngImage.pixelWidth == 60)
                let asked = try Self.decode(try await harness.image("spinner.gif", [("w", "48"), ("format", "apng")]))
                #expect(asked.format == .apng && asked.frames.count == 6)
                let still = try Self.decode(try await harness.image("bounce.webp", [("format", "png")]))
                #expect(still.format == .png && still.frames.count <= 1)
            }
        }

        @Test func conditionalRequestsGet304() async throws {
            try await withImageServer { harness in
                let first = try await harness.image("photo.jpg", [("w", "100")])
                let etag = try #require(first.header("etag"))
                let again = try await harness.image("photo.jpg", [("w", "100")], headers: [("If-None-Match", etag)])
                #expect(again.status == 304 && again.body.isEmpty)
                #expect(again.header("etag") == etag && again.header("cache-control") == "public, max-age=31536000")
                let other = try await harness.image("photo.jpg", [("w", "101")], headers: [("If-None-Match", etag)])
                #expect(other.status == 200 && other.header("etag") != etag)
            }
        }

        @Test func conditionalRequestWithoutResultCacheSkipsRendering() async throws {
            try await withImageServer({ $0.resultMemoryBytes = 0 }) { harness in
                let first = try await harness.image("photo.jpg", [("w", "100")])
                let etag = try #require(first.header("etag"))
                let again = try await harness.image("photo.jpg", [("w", "100")], headers: [("If-None-Match", "\"other\", \(etag)")])
                #expect(again.status == 304)
                #expect(again.header("server-timing") == nil)
            }
        }
    }
}
