import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Partial images from partial data")
struct ProgressiveTests {
    static let source = SampleImages.pattern(width: 160, height: 120, seed: 12)

    @Test func progressiveJPEGSharpensAsScansArrive() throws {
        let data = try JPEGCoder(progressive: true).encode(Self.source, as: .jpeg, quality: 0.9)
        var previous = 0.0
        for fraction in [0.3, 0.6, 1.0] {
            let prefix = Data(data.prefix(Int(Double(data.count) * fraction)))
            let partial = try #require(JPEGCoder().decodePartial(prefix, options: .default), "at \(fraction)")
            #expect(partial.pixelWidth == 160 && partial.pixelHeight == 120)
            let quality = psnr(partial, Self.source)
            #expect(quality >= previous, "at \(fraction)")
            previous = quality
        }
        #expect(previous > 30)
        // The same prefix is an error for the strict decoder, a partial image for the lenient one.
        #expect(throws: ImageDecodingError.self) { _ = try JPEGCoder().decode(Data(data.prefix(data.count / 2)), options: .init(strict: true)) }
        #expect(try JPEGCoder().decode(Data(data.prefix(data.count / 2)), options: .default).isPartial)
    }

    @Test func baselineJPEGShowsItsTopRows() throws {
        let data = try JPEGCoder().encode(Self.source, as: .jpeg, quality: 0.9)
        let partial = try #require(JPEGCoder().decodePartial(Data(data.prefix(data.count / 2)), options: .default))
        let top = Resampler.resize(partial, width: 160, height: 120)
        #expect(psnr(crop(top, rows: 0..<16), crop(Self.source, rows: 0..<16)) > 30)
        #expect(psnr(crop(top, rows: 104..<120), crop(Self.source, rows: 104..<120)) < 20)
    }

    @Test func interlacedPNGFillsAdam7BlocksThenIsExact() throws {
        let fixture = Fixtures.named("png-interlaced")
        let complete = try #require(PNGCoder().decodePartial(fixture.data, options: .default))
        #expect(complete.pixels == fixture.reference.pixels)
        // Cut inside the later passes: first-pass pixels are exact, and every pixel shows a value
        // from its own 8×8 block (block filling), but not yet the whole image.
        let partial = try #require(PNGCoder().decodePartial(Data(fixture.data.prefix(fixture.data.count * 2 / 3)), options: .default))
        let reference = fixture.reference
        #expect(partial.pixels != reference.pixels)
        for y in 0..<reference.pixelHeight {
            for x in 0..<reference.pixelWidth {
                let value = partial.pixel(x: x, y: y)
                if x % 8 == 0 && y % 8 == 0 { #expect(value == reference.pixel(x: x, y: y)) }
                let block = (x / 8 * 8..<min(x / 8 * 8 + 8, reference.pixelWidth)).flatMap { bx in
                    (y / 8 * 8..<min(y / 8 * 8 + 8, reference.pixelHeight)).map { by in reference.pixel(x: bx, y: by) }
                }
                #expect(block.contains { $0 == value }, "\(x),\(y)")
            }
        }
    }

    @Test func webpGivesTheRowsDecodedSoFar() throws {
        let data = try WebPCoder().encode(Self.source, as: .webp, quality: 1)
        let partial = try #require(WebPCoder().decodePartial(Data(data.prefix(data.count * 2 / 3)), options: .default))
        #expect(partial.pixelWidth == 160 && !partial.isOpaque)
        #expect(partial.pixel(x: 0, y: 0) == Self.source.pixel(x: 0, y: 0))
        #expect(partial.pixel(x: 159, y: 119).a == 0)
        #expect(WebPCoder().decodePartial(data, options: .default)?.pixels == Self.source.pixels)
        #expect(WebPCoder().decodePartial(Data(data.prefix(20)), options: .default) == nil)
    }

    @Test func decoderThrottlesPartialImages() throws {
        let data = try JPEGCoder(progressive: true).encode(Self.source, as: .jpeg, quality: 0.9)
        var decoder = ProgressiveDecoder(decoder: JPEGCoder(), minimumInterval: .milliseconds(500))
        let start = ContinuousClock.now
        let chunks = stride(from: 0, to: data.count, by: data.count / 6 + 1).map { data[$0..<min($0 + data.count / 6 + 1, data.count)] }
        // Six chunks, 100 ms apart on the given clock: partial images at 0 ms and 500 ms only.
        let shown = chunks.enumerated().compactMap { index, chunk in
            decoder.append(Data(chunk), now: start + .milliseconds(100 * index)).map { _ in index }
        }
        #expect(shown == [0, 5])
        #expect(decoder.data == data)
    }
}

/// The rows `rows` of `image` as a new image.
func crop(_ image: Image, rows: Range<Int>) -> Image {
    let bytes = Array(image.pixels[rows.lowerBound * image.bytesPerRow..<rows.upperBound * image.bytesPerRow])
    return Image(format: image.format, pixelWidth: image.pixelWidth, pixelHeight: rows.count, bytesPerRow: image.bytesPerRow, pixels: bytes, isOpaque: image.isOpaque)
}
