import Foundation
import Testing
@testable import WebImage
import WebImageOrigin

@Suite("Resampler and thumbnails straight from compressed data", .cpuBound)
struct ThumbnailTests {
    @Test func fittingSizeKeepsAspectAndNeverEnlarges() {
        #expect(Resampler.fittingSize(width: 4000, height: 3000, maxWidth: 256, maxHeight: 256) == (256, 192))
        #expect(Resampler.fittingSize(width: 3000, height: 4000, maxWidth: 256, maxHeight: 256) == (192, 256))
        #expect(Resampler.fittingSize(width: 100, height: 50, maxWidth: 256, maxHeight: 256) == (100, 50))
        #expect(Resampler.fittingSize(width: 10_000, height: 1, maxWidth: 100, maxHeight: 100) == (100, 1))
    }

    @Test func areaAveragingOfIntegerFactorsIsTheBlockMean() {
        // 4×2 → 2×1: each output pixel is the mean of a 2×2 block.
        let pixels: [UInt8] = [
            10, 20, 30, 255, 30, 40, 50, 255, 0, 0, 0, 0, 100, 100, 100, 100,
            50, 60, 70, 255, 70, 80, 90, 255, 0, 0, 0, 0, 0, 0, 0, 0,
        ]
        let out = Resampler.resample(pixels, width: 4, height: 2, bytesPerRow: 16, toWidth: 2, toHeight: 1)
        #expect(out == [40, 50, 60, 255, 25, 25, 25, 25])
    }

    @Test func fractionalFactorsWeighByCoverage() {
        // 3 pixels → 2: the middle pixel is split half and half.
        let row: [UInt8] = [0, 0, 0, 255, 90, 90, 90, 255, 180, 180, 180, 255]
        let out = Resampler.resample(row, width: 3, height: 1, bytesPerRow: 12, toWidth: 2, toHeight: 1)
        #expect(out == [30, 30, 30, 255, 150, 150, 150, 255])
    }

    @Test func flatColourStaysFlatAtAnySize() {
        let flat = [UInt8](repeating: 0, count: 37 * 23 * 4).enumerated().map { [UInt8(77), 140, 201, 255][$0.offset % 4] }
        for (w, h) in [(10, 6), (36, 22), (1, 1), (37, 5)] {
            let out = Resampler.resample(flat, width: 37, height: 23, bytesPerRow: 37 * 4, toWidth: w, toHeight: h)
            #expect(out == Array(flat.prefix(w * h * 4)), "\(w)×\(h)")
        }
    }

    @Test func jpegThumbnailComesFromDCTScalingAndIsClose() throws {
        let source = SampleImages.pattern(width: 1200, height: 900, seed: 4)
        let data = try JPEGCoder().encode(source, as: .jpeg, quality: 0.9)
        let thumbnail = try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 256))
        #expect(thumbnail.pixelWidth == 256 && thumbnail.pixelHeight == 192)
        #expect(thumbnail.bytesPerRow == 256 * 4 && thumbnail.pixels.count == 256 * 192 * 4)
        let reference = Resampler.resize(try JPEGCoder().decode(data, options: .default), width: 256, height: 192)
        #expect(psnr(thumbnail, reference) > 30)
    }

    @Test func jpegDecodesAtTheSmallestDCTScaleCoveringTheTarget() {
        // A 4000×3000 JPEG for a 256 px thumbnail decodes at 1/8 (500×375), never at full size.
        let header = ImageHeader(format: .jpeg, pixelWidth: 4000, pixelHeight: 3000, hasAlpha: false)
        #expect(JPEGCoder.scaledSize(header, atLeast: (256, 192)) == (500, 375))
        #expect(JPEGCoder.scaledSize(header, atLeast: (1000, 750)) == (1000, 750))  // 1/4
        // Only the scales with SIMD inverse DCTs: 1/2, not 3/8 (1500 × 1125).
        #expect(JPEGCoder.scaledSize(header, atLeast: (1200, 900)) == (2000, 1500))
        #expect(JPEGCoder.scaledSize(header, atLeast: (4000, 3000)) == (4000, 3000))
        // P7's 1024-pixel request from 1600 × 1200: the whole picture, not 3/4 (1200 × 900),
        // which libjpeg-turbo decodes in scalar 6 × 6 and 12 × 12 IDCTs, slower than at 1/1.
        let photo = ImageHeader(format: .jpeg, pixelWidth: 1600, pixelHeight: 1200, hasAlpha: false)
        #expect(JPEGCoder.scaledSize(photo, atLeast: (1024, 768)) == (1600, 1200))
        for (width, height) in [(1600, 1200), (1201, 799), (33, 17), (1, 1)] {
            let source = ImageHeader(format: .jpeg, pixelWidth: width, pixelHeight: height, hasAlpha: false)
            for target in [(1, 1), (width / 3, height / 3), (width / 2, height / 2), (width, height)] {
                let size = JPEGCoder.scaledSize(source, atLeast: target)
                let scale = JPEGCoder.scalingFactor(source, fitting: size)
                #expect(size.0 >= target.0 && size.1 >= target.1)
                #expect(8 * scale.num % scale.denom == 0 && [1, 2, 4, 8].contains(8 * scale.num / scale.denom), "\(width)x\(height) → \(target): \(scale)")
            }
        }
    }

    @Test func webpThumbnailIsScaledByLibwebp() throws {
        let source = SampleImages.pattern(width: 600, height: 400, seed: 2)
        let data = try WebPCoder().encode(source, as: .webp, quality: 1)
        let thumbnail = try WebPCoder().decode(data, options: .init(thumbnailMaxPixelSize: 150))
        #expect(thumbnail.pixelWidth == 150 && thumbnail.pixelHeight == 100)
        #expect(psnr(thumbnail, Resampler.resize(source, width: 150, height: 100)) > 30)
    }

    @Test(arguments: ["png", "gif", "webp-animated"])
    func otherFormatsDecodeThenDownscale(kind: String) throws {
        let data: Data = switch kind {
        case "png": try SampleImages.png(width: 400, height: 100, seed: 1)
        case "gif": try SampleImages.gif(width: 400, height: 100, count: 3)
        default: try SampleImages.animatedWebP(width: 400, height: 100, count: 3)
        }
        let thumbnail = try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 100))
        #expect(thumbnail.pixelWidth == 100 && thumbnail.pixelHeight == 25)
        #expect(thumbnail.frames.allSatisfy { $0.pixels.count == 100 * 25 * 4 })
        #expect(thumbnail.frames.count == (kind == "png" ? 0 : 3))
        // Animations shrink each frame as it is composited: the same as shrinking afterwards.
        let afterwards = Resampler.resize(try ImageCoderRegistry.default.decode(data), width: 100, height: 25)
        #expect(thumbnail.pixels == afterwards.pixels)
        #expect(thumbnail.frames.map(\.pixels) == afterwards.frames.map(\.pixels))
    }

    @Test func registryDownscalesWhatCustomDecodersReturn() throws {
        var coders = ImageCoderRegistry.default
        coders.insert(StubDecoder(image: SampleImages.pattern(width: 40, height: 20)) as any ImageDecoding, at: 0)
        let image = try coders.decode(try SampleImages.jpeg(width: 8, height: 8), options: .init(thumbnailMaxPixelSize: 10))
        #expect(image.pixelWidth == 10 && image.pixelHeight == 5)
    }

    @Test func smallImagesAreNotEnlarged() throws {
        let data = try SampleImages.jpeg(width: 120, height: 80)
        let image = try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 500))
        #expect(image.pixelWidth == 120 && image.pixelHeight == 80)
    }
}
