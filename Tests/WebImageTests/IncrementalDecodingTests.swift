import Foundation
import Testing
import WebImage
import WebImageOrigin

/// ``IncrementalImageDecoding``: one decoder kept for a whole download gives, after every chunk,
/// the partial image the stateless prefix decode gives for the same bytes, and in the end the
/// full decode.
@Suite("Incremental decoders: state kept across chunks", .cpuBound)
struct IncrementalDecodingTests {
    static func webps() throws -> [(name: String, data: Data)] {
        [
            ("lossy", try SampleImages.webp(width: 300, height: 220, seed: 4, quality: 0.8)),
            ("lossy-alpha", try SampleImages.webp(width: 257, height: 131, seed: 5, alpha: true, quality: 0.6)),
            ("lossless-alpha", try WebPCoder().encode(SampleImages.pattern(width: 200, height: 150, seed: 6, alpha: true), as: .webp, quality: 1)),
        ]
    }

    @Test(arguments: [1, 97, 1024, 10_000])
    func everyChunkGivesThePrefixDecodesImage(chunkSize: Int) throws {
        for (name, data) in try Self.webps() {
            let incremental = try #require(WebPCoder().makeIncrementalDecoder(for: .webp, options: .default))
            var shown = 0
            // Every chunk for small files; with one-byte chunks, every 61st (the prefix decode is quadratic).
            for (step, end) in stride(from: chunkSize, through: data.count + chunkSize - 1, by: chunkSize).enumerated() {
                incremental.append(data[(end - chunkSize)..<min(end, data.count)])
                guard chunkSize > 1 || step % 61 == 0 || end >= data.count else { continue }
                let prefix = Data(data.prefix(end))
                let stateless = WebPCoder().decodePartial(prefix, options: .default)
                let partial = incremental.partialImage()
                #expect(partial?.pixels == stateless?.pixels, "\(name): \(prefix.count) of \(data.count) bytes")
                #expect(partial?.isOpaque == stateless?.isOpaque, "\(name): \(prefix.count) of \(data.count) bytes")
                if partial != nil { shown += 1 }
            }
            #expect(shown > 0, "\(name)")
            #expect(incremental.partialImage()?.pixels == (try WebPCoder().decode(data, options: .default)).pixels, "\(name)")
        }
    }

    /// WebP here; PNG with PNGIncrementalTests' plain RGB file (JPEG: JPEGIncrementalTests).
    @Test(arguments: [ImageFormat.webp, .png])
    func progressiveDecoderUsesTheIncrementalPathThroughTheRegistry(format: ImageFormat) throws {
        let (data, coder): (Data, any ProgressiveImageDecoding) = format == .webp
            ? (try Self.webps()[0].data, WebPCoder()) : (PNGIncrementalTests.files[0].data, PNGCoder())
        var progressive = ProgressiveDecoder(decoder: ImageCoderRegistry.default, minimumInterval: .zero)
        var previews = 0
        for end in stride(from: 700, to: data.count, by: 700) {
            let prefix = Data(data.prefix(end))
            guard let preview = progressive.update(with: prefix) else { continue }
            #expect(preview.pixels == coder.decodePartial(prefix, options: .default)?.pixels, "at \(end)")
            previews += 1
        }
        let last = progressive.update(with: data)
        let full = try ImageCoderRegistry.default.decode(data, options: .default)
        #expect(previews > 3 && last?.pixels == full.pixels)
        #expect(ImageCoderRegistry.default.makeIncrementalDecoder(for: format, options: .default) != nil)
    }

    @Test func thumbnailOptionShrinksPartialImagesLikeThePrefixDecode() throws {
        let data = try Self.webps()[0].data
        let options = ImageDecodingOptions(thumbnailMaxPixelSize: 64)
        let incremental = try #require(WebPCoder().makeIncrementalDecoder(for: .webp, options: options))
        incremental.append(data.prefix(data.count / 2))
        let partial = try #require(incremental.partialImage())
        #expect(max(partial.pixelWidth, partial.pixelHeight) == 64)
        #expect(partial.pixels == WebPCoder().decodePartial(Data(data.prefix(data.count / 2)), options: options)?.pixels)
    }

    @Test func animationsImagesOverTheLimitAndGarbageGiveNoPartialImage() throws {
        let animated = try SampleImages.animatedWebP(width: 40, height: 30)
        let still = try Self.webps()[0].data
        let cases: [(Data, ImageDecodingOptions)] = [
            (animated, .default),
            (still, ImageDecodingOptions(maxPixelCount: 300 * 220 - 1)),
            (Data("RIFF\u{10}\u{0}\u{0}\u{0}WEBPVP8 garbage-garbage-garbage".utf8) + Data(repeating: 0xA5, count: 4000), .default),
        ]
        for (data, options) in cases {
            let incremental = try #require(WebPCoder().makeIncrementalDecoder(for: .webp, options: options))
            for chunk in stride(from: 0, to: data.count, by: 512) {
                incremental.append(data[chunk..<min(chunk + 512, data.count)])
                #expect(incremental.partialImage() == nil)
                #expect(WebPCoder().decodePartial(Data(data.prefix(chunk + 512)), options: options) == nil)
            }
        }
    }
}
