import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
/// Processed variants stored on disk by the default cache serializer and read back after a
/// "restart" (a new pipeline on the same cache directory): nothing a lossless format would
/// keep is lost — alpha above all.
@Suite("Variants survive a restart of the disk cache")
struct VariantSerializationTests {
    /// Every processor the README lists, alone (rotate both ways).
    static let processors: [(String, [any ImageProcessing])] = [
        ("resize", [.resize(width: 96, height: 64, mode: .fill)]),
        ("crop", [.crop(x: 10, y: 20, width: 80, height: 50)]),
        ("flip", [.flip(.horizontal)]),
        ("rotate quarter", [.rotate(degrees: 90)]),
        ("rotate arbitrary", [.rotate(degrees: 30)]),
        ("round", [.roundedCorners(radius: 16)]),
        ("circle", [.circle()]),
        ("blur", [.gaussianBlur(radius: 4)]),
        ("tint", [.tint(RGBAColor(red: 200, green: 40, blue: 40, alpha: 128))]),
        ("grayscale", [.grayscale()]),
    ]

    /// The image of `url` processed by `processors` from a first pipeline, and again from a new
    /// one on the same cache directory (which must read the stored variant, not process again).
    static func loadTwice(_ url: URL, _ processors: [any ImageProcessing], cache: URL) async throws -> (first: Image, reloaded: Image) {
        let request = ImageRequest(url: url).processed(by: processors).options(.waitStoreCache)
        let first = try await makePipeline(cacheDirectory: cache).image(for: request)
        #expect(first.source == .network)
        let restarted = try makePipeline(cacheDirectory: cache)
        let reloaded = try await restarted.image(for: request)
        #expect(reloaded.source == .disk)
        #expect(restarted.statistics.processings == 0, "the variant was processed again instead of read")
        return (first.image, reloaded.image)
    }

    /// The largest difference of one channel, and the mean of all.
    static func difference(_ a: Image, _ b: Image) -> (max: Int, mean: Double) {
        var largest = 0, total = 0
        for (x, y) in zip(a.pixels, b.pixels) {
            let d = abs(Int(x) - Int(y))
            largest = max(largest, d)
            total += d
        }
        return (largest, Double(total) / Double(max(a.pixels.count, 1)))
    }

    @Test func everyProcessorOfAJPEGReloadsIdenticallyWithAlphaOrWithinTheJPEGBoundWithout() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: cache) }
            for (name, processors) in Self.processors {
                let (first, reloaded) = try await Self.loadTwice(origin.imageURL("small.jpg", query: name), processors, cache: cache)
                #expect(first.pixelWidth == reloaded.pixelWidth && first.pixelHeight == reloaded.pixelHeight, "\(name)")
                if first.isOpaque {
                    // Decision: an opaque variant of a JPEG stays JPEG (quality 0.9), as SDWebImage
                    // and Nuke keep the source format; its error is bounded, never alpha.
                    #expect(reloaded.format == .jpeg && reloaded.isOpaque, "\(name)")
                    let error = Self.difference(first, reloaded)
                    #expect(error.max <= 48 && error.mean <= 3, "\(name): \(error)")
                } else {
                    #expect(reloaded.format == .png, "\(name)")
                    #expect(reloaded.pixels == first.pixels, "\(name): lossless variant changed")
                }
            }
            // The README's avatar: the corners stay transparent after the restart.
            let (_, avatar) = try await Self.loadTwice(
                origin.imageURL("photo.jpg"), [.resize(width: 96, height: 96, mode: .fill), .circle()], cache: cache)
            #expect(avatar.pixel(x: 0, y: 0).a == 0 && avatar.pixel(x: 95, y: 95).a == 0)
            #expect(avatar.pixel(x: 48, y: 48).a == 255)
        }
    }

    @Test func variantsOfLosslessOriginalsStayLossless() async throws {
        let losslessWebP = try SampleImages.webp(width: 90, height: 70, seed: 12, alpha: false, quality: 1)
        var files = SampleFiles.standard
        files["lossless.webp"] = losslessWebP
        try await withOrigin(files: files) { origin in
            let cache = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: cache) }
            let cases: [(String, ImageFormat)] = [("opaque.png", .png), ("logo.png", .png), ("lossless.webp", .webp), ("badge.webp", .webp)]
            for (file, stored) in cases {
                for (name, processors) in Self.processors {
                    let (first, reloaded) = try await Self.loadTwice(origin.imageURL(file, query: name), processors, cache: cache)
                    #expect(reloaded.format == stored, "\(file) \(name)")
                    #expect(reloaded.pixels == first.pixels, "\(file) \(name): lossless variant changed")
                }
            }
            // A lossy WebP's opaque variant stays lossy WebP.
            let (_, lossy) = try await Self.loadTwice(origin.imageURL("photo.webp"), [.grayscale()], cache: cache)
            #expect(lossy.format == .webp)
        }
    }
}
}
