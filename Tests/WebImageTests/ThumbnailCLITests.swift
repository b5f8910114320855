import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("webimage fetch --resize/--format and info for GIF and WebP", .cpuBound)
struct ThumbnailCLITests {
    struct Info: Decodable { var format: String; var width, height, frames, bytes: Int }

    @Test(arguments: [("spinner.gif", "gif", 96, 96, 6), ("bounce.webp", "webp", 120, 90, 5), ("photo.webp", "webp", 640, 480, 1), ("photo.avif", "avif", 320, 240, 1), ("photo.heic", "heic", 320, 240, 1)])
    func infoReportsAnimatedFormats(file: String, format: String, width: Int, height: Int, frames: Int) async throws {
        let path = temporaryDirectory().appendingPathComponent(file)
        try SampleFiles.standard[file]!.write(to: path)
        let result = try await WebImageCommand.run(["info", path.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let info = try JSONDecoder().decode(Info.self, from: Data(result.stdout.utf8))
        #expect(info.format == format && info.width == width && info.height == height && info.frames == frames)
        let text = try await WebImageCommand.run(["info", path.path])
        #expect(text.stdout.contains("\(format) \(width)×\(height), \(frames) frame"))
    }

    @Test func resizeAndFormatWriteThumbnailsWithTheOutputExtension() async throws {
        try await withOrigin { origin in
            let output = temporaryDirectory()
            let urls = ["landscape.jpg", "logo.png", "bounce.webp"].map { origin.imageURL($0).absoluteString }
            let result = try await WebImageCommand.run(
                ["fetch"] + urls + ["--output", output.path, "--cache-dir", temporaryDirectory().path,
                                    "--resize", "200x200", "--format", "webp"])
            #expect(result.status == 0, "\(result.stderr)")
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: output.path).filter { !$0.hasPrefix(".") })
            #expect(names == ["landscape.webp", "logo.webp", "bounce.webp"])
            let expected = ["landscape.webp": (200, 113, 1), "logo.webp": (200, 200, 1), "bounce.webp": (120, 90, 5)]  // already fits: never enlarged
            for (name, (w, h, frames)) in expected {
                let data = try Data(contentsOf: output.appendingPathComponent(name))
                let image = try ImageCoderRegistry.default.decode(data)
                #expect(image.format == .webp && image.pixelWidth == w && image.pixelHeight == h, "\(name): \(image.pixelWidth)×\(image.pixelHeight)")
                #expect(image.frameCount == frames, "\(name)")
            }
        }
    }

    @Test func resizeAloneKeepsTheSourceFormat() async throws {
        try await withOrigin { origin in
            let output = temporaryDirectory()
            let result = try await WebImageCommand.run(
                ["fetch", origin.imageURL("photo.jpg").absoluteString, origin.imageURL("spinner.gif").absoluteString,
                 "--output", output.path, "--cache-dir", temporaryDirectory().path, "--resize", "64x48"])
            #expect(result.status == 0, "\(result.stderr)")
            let jpeg = try ImageCoderRegistry.default.decode(try Data(contentsOf: output.appendingPathComponent("photo.jpg")))
            #expect(jpeg.format == .jpeg && jpeg.pixelWidth == 48 && jpeg.pixelHeight == 48)
            let gif = try ImageCoderRegistry.default.decode(try Data(contentsOf: output.appendingPathComponent("spinner.gif")))
            #expect(gif.format == .gif && gif.pixelWidth == 48 && gif.frameCount == 6)
        }
    }

    @Test func formatAloneReencodesAtFullSize() async throws {
        try await withOrigin { origin in
            let output = temporaryDirectory()
            let result = try await WebImageCommand.run(
                ["fetch", origin.imageURL("small.jpg").absoluteString, "--output", output.path,
                 "--cache-dir", temporaryDirectory().path, "--format", "png", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let data = try Data(contentsOf: output.appendingPathComponent("small.png"))
            let png = try ImageCoderRegistry.default.decode(data)
            #expect(png.format == .png && png.pixelWidth == 120 && png.pixelHeight == 80)
            #expect(result.stdout.contains("\"bytes\":\(data.count)"))
        }
    }

    /// `--quality` reaches the encoder: a lower quality writes a smaller file of the same size in
    /// pixels, further from the source; the default is 85.
    @Test func qualityReachesTheEncoder() async throws {
        try await withOrigin { origin in
            var sizes: [String: Int] = [:]
            var errors: [String: Double] = [:]
            // What the origin serves as landscape.jpg, decoded: what each run re-encodes.
            let source = try ImageCoderRegistry.default.decode(try SampleImages.jpeg(width: 1600, height: 900, seed: 2))
            for quality in ["20", "85", "98", nil] {
                let output = temporaryDirectory()
                let result = try await WebImageCommand.run(
                    ["fetch", origin.imageURL("landscape.jpg").absoluteString, "--output", output.path, "--no-cache", "--format", "jpeg"]
                        + (quality.map { ["--quality", $0] } ?? []))
                try #require(result.status == 0, "\(result.stdout)\(result.stderr)")
                let data = try Data(contentsOf: output.appendingPathComponent("landscape.jpg"))
                let image = try ImageCoderRegistry.default.decode(data)
                #expect(image.pixelWidth == source.pixelWidth && image.pixelHeight == source.pixelHeight)
                sizes[quality ?? "default"] = data.count
                errors[quality ?? "default"] = meanAbsoluteError(image, source)
            }
            #expect(sizes["20"]! < sizes["85"]! && sizes["85"]! < sizes["98"]!, "\(sizes)")
            #expect(errors["20"]! > errors["85"]! && errors["85"]! > errors["98"]!, "\(errors)")
            #expect(sizes["default"] == sizes["85"], "the default is 85: \(sizes)")
        }
    }

    /// Mean absolute difference per colour channel of two images of one size.
    private func meanAbsoluteError(_ a: Image, _ b: Image) -> Double {
        var total = 0
        for (x, y) in zip(a.pixels, b.pixels) { total += abs(Int(x) - Int(y)) }
        return Double(total) / Double(a.pixels.count)
    }

    @Test(arguments: [["--resize", "abc"], ["--resize", "0x10"], ["--format", "tiff"], ["--quality", "0", "--format", "jpeg"],
                      ["--quality", "101", "--resize", "10x10"], ["--quality", "80"]])
    func badOptionsAreRejected(arguments: [String]) async throws {
        let result = try await WebImageCommand.run(["fetch", "http://127.0.0.1:1/a.jpg", "--output", temporaryDirectory().path] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(arguments[0]))
    }
}
