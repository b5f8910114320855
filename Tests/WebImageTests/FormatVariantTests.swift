import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Every format variant decodes to its reference")
struct FormatVariantTests {
    @Test(arguments: Fixtures.all)
    func decodesToReference(_ fixture: Fixture) throws {
        let image = try ImageCoderRegistry.default.decode(fixture.data)
        #expect(image.pixelWidth == fixture.reference.pixelWidth && image.pixelHeight == fixture.reference.pixelHeight)
        #expect(image.isOpaque == fixture.reference.isOpaque || fixture.name.hasPrefix("webp-lossy"))
        switch fixture.match {
        case .exact:
            #expect(image.pixels == fixture.reference.pixels)
        case .within(let tolerance):
            #expect(maxDifference(image, fixture.reference) <= tolerance)
        case .psnr(let minimum):
            #expect(psnr(image, fixture.reference) >= minimum)
        }
        let header = try ImageCoderRegistry.default.readHeader(fixture.data)
        #expect(header.pixelWidth == image.pixelWidth && header.pixelHeight == image.pixelHeight && header.frameCount == 1)
        #expect(header.format == ImageFormat(sniffing: fixture.data))
    }

    @Test func formatsAreSniffedFromTheirBytes() {
        for fixture in Fixtures.all {
            let expected = fixture.name.split(separator: "-").first.map(String.init)
            #expect(ImageFormat(sniffing: fixture.data)?.rawValue == expected, "\(fixture.name)")
        }
    }

    @Test func transparentPNGAndGIFReportAlpha() throws {
        #expect(try ImageCoderRegistry.default.readHeader(Fixtures.named("png-palette-trns").data).hasAlpha)
        #expect(try ImageCoderRegistry.default.readHeader(Fixtures.named("gif-transparency").data).hasAlpha)
        #expect(try !ImageCoderRegistry.default.readHeader(Fixtures.named("gif-still").data).hasAlpha)
        #expect(try ImageCoderRegistry.default.readHeader(Fixtures.named("webp-alpha").data).hasAlpha)
    }

    @Test func registryEncodesEveryFormatItDecodes() throws {
        let source = SampleImages.pattern(width: 30, height: 20, seed: 2)
        for format in [ImageFormat.jpeg, .png, .gif, .webp] {
            let data = try ImageCoderRegistry.default.encode(source, as: format, quality: 0.9)
            #expect(ImageFormat(sniffing: data) == format)
            let decoded = try ImageCoderRegistry.default.decode(data)
            #expect(decoded.pixelWidth == 30 && decoded.pixelHeight == 20)
            #expect(psnr(decoded, source) > 25, "\(format)")
        }
    }

    @Test func webpQualityOneIsLosslessAndLowerIsLossy() throws {
        let source = SampleImages.pattern(width: 50, height: 40, seed: 11)
        let lossless = try WebPCoder().encode(source, as: .webp, quality: 1)
        let lossy = try WebPCoder().encode(source, as: .webp, quality: 0.5)
        #expect(try WebPCoder().decode(lossless, options: .default).pixels == source.pixels)
        let decodedLossy = try WebPCoder().decode(lossy, options: .default)
        #expect(decodedLossy.pixels != source.pixels && psnr(decodedLossy, source) > 25)
    }

    /// Valid JPEGs whose sampling factors TurboJPEG 2.1 cannot name (its header read fails):
    /// decoded as libjpeg decodes them (Pillow's reference), in strict mode too.
    @Test(arguments: ["jpeg-sampling-chroma-over-luma", "jpeg-sampling-mixed"])
    func jpegWithUnnamedSamplingDecodesLikeLibjpeg(_ name: String) throws {
        let data = try CodecFixtures.data("\(name).jpg")
        let image = try ImageCoderRegistry.default.decode(data)
        let reference = try CodecFixtures.reference("\(name).ref.png")
        #expect(image.pixelWidth == reference.pixelWidth && image.pixelHeight == reference.pixelHeight)
        #expect(maxDifference(image, reference) == 0 && image.repairs.isEmpty)
        #expect(try ImageCoderRegistry.default.decode(data, options: ImageDecodingOptions(strict: true)).pixels == image.pixels)
    }

    @Test func gifEncoderKeepsFewColoursExactlyAndQuantisesMany() throws {
        let few = Fixtures.named("gif-still").reference
        #expect(try GIFCoder().decode(GIFCoder().encode(few, as: .gif, quality: 1), options: .default).pixels == few.pixels)
        let many = SampleImages.pattern(width: 64, height: 64, seed: 3)
        let decoded = try GIFCoder().decode(GIFCoder().encode(many, as: .gif, quality: 1), options: .default)
        #expect(decoded.isOpaque)
        #expect(psnr(decoded, many) > 28)
    }
}

func maxDifference(_ a: Image, _ b: Image) -> Int {
    zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
}
