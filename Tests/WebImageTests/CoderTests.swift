import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("JPEG, PNG, GIF and WebP coders over the C libraries")
struct CoderTests {
    @Test func jpegRoundTripKeepsSizeAndHighPSNR() throws {
        let source = SampleImages.pattern(width: 320, height: 200, seed: 9)
        let data = try JPEGCoder().encode(source, as: .jpeg, quality: 0.92)
        #expect(ImageFormat(sniffing: data) == .jpeg)
        let decoded = try ImageCoderRegistry.default.decode(data)
        #expect(decoded.format == .jpeg && decoded.isOpaque)
        #expect(decoded.pixelWidth == 320 && decoded.pixelHeight == 200)
        #expect(psnr(source, decoded) > 30)
        let header = try ImageCoderRegistry.default.readHeader(data)
        #expect(header == ImageHeader(format: .jpeg, pixelWidth: 320, pixelHeight: 200, hasAlpha: false))
    }

    @Test func pngRoundTripIsLossless() throws {
        let opaque = SampleImages.pattern(width: 97, height: 61, seed: 3)
        let decodedOpaque = try ImageCoderRegistry.default.decode(try PNGCoder().encode(opaque, as: .png, quality: 1))
        #expect(decodedOpaque.pixels == opaque.pixels)
        #expect(decodedOpaque.isOpaque)

        let translucent = SampleImages.pattern(width: 64, height: 64, seed: 4, alpha: true)
        let decoded = try ImageCoderRegistry.default.decode(try PNGCoder().encode(translucent, as: .png, quality: 1))
        #expect(!decoded.isOpaque)
        // Premultiplied → straight → premultiplied may round by one step at most.
        let maxDifference = zip(decoded.pixels, translucent.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(maxDifference <= 1)
        #expect(decoded.pixel(x: 0, y: 0).a == 0)
        #expect(decoded.pixel(x: 32, y: 32).a > 240)
    }

    @Test func emptyDataIsEmptyError() {
        #expect(throws: ImageDecodingError.empty) { _ = try ImageCoderRegistry.default.decode(Data()) }
    }

    @Test func textIsUnsupportedFormat() {
        #expect(throws: ImageDecodingError.unsupportedFormat(nil)) {
            _ = try ImageCoderRegistry.default.decode(Data("hello, this is not an image".utf8))
        }
    }

    @Test(arguments: [1, 10, 100, 600, 2000])
    func truncatedJPEGIsCorruptError(length: Int) throws {
        let data = try SampleImages.jpeg(width: 200, height: 200).prefix(length)
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(Data(data), options: .init(strict: true)) }
        expectErrorOrPartial { try ImageCoderRegistry.default.decode(Data(data)) }
    }

    @Test(arguments: [8, 20, 33, 60, 300])
    func truncatedPNGIsCorruptError(length: Int) throws {
        let data = try SampleImages.png(width: 100, height: 100).prefix(length)
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(Data(data), options: .init(strict: true)) }
        expectErrorOrPartial { try ImageCoderRegistry.default.decode(Data(data)) }
    }

    @Test func flippedBytesInPNGAreCaughtByCRC() throws {
        var data = try SampleImages.png(width: 50, height: 50)
        data[data.count / 2] ^= 0xFF
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(data) }
    }

    @Test func hugePNGHeaderIsRefusedBeforeAllocation() throws {
        let data = PNGBomb.header(width: 100_000, height: 100_000)
        #expect(try PNGCoder().readHeader(data).pixelWidth == 100_000)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test func hugeJPEGHeaderIsRefusedBeforeAllocation() throws {
        let data = JPEGBomb.header(width: 60_000, height: 60_000)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 60_000, height: 60_000, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test func pixelLimitIsConfigurable() throws {
        let data = try SampleImages.jpeg(width: 100, height: 100)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100, height: 100, frames: 1, limit: 9_999)) {
            _ = try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 9_999))
        }
        #expect(try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 10_000)).pixelWidth == 100)
    }

    @Test func gifWithZeroCanvasIsCorrupt() {
        // A zero-size screen is grown to the frames (LeniencyTests); without any frame it is corrupt.
        let gif = Data("GIF89a".utf8) + Data(repeating: 0, count: 20)
        #expect {
            _ = try ImageCoderRegistry.default.decode(gif)
        } throws: { error in
            guard case .corrupt(format: .gif, _)? = error as? ImageDecodingError else { return false }
            return true
        }
    }

    @Test func customDecoderIsAskedFirst() throws {
        var coders = ImageCoderRegistry.default
        let fixed = Image(format: .jpeg, pixelWidth: 1, pixelHeight: 1, pixels: [1, 2, 3, 255], isOpaque: true)
        coders.insert(StubDecoder(image: fixed) as any ImageDecoding, at: 0)
        let image = try coders.decode(try SampleImages.jpeg(width: 10, height: 10))
        #expect(image.pixels == [1, 2, 3, 255])
    }

    @Test(arguments: [0, 4095, 4096, 9999, 10_000 - 1])
    func oneTranslucentPixelAnywhereMakesAnAnimationTranslucent(at index: Int) {
        let opaque = [UInt8](repeating: 255, count: 10_000 * 4)
        var translucent = opaque
        translucent[index * 4 + 3] = 254
        let frames = [ImageFrame(pixels: opaque, duration: .milliseconds(100)), ImageFrame(pixels: translucent, duration: .milliseconds(100))]
        #expect(!Image(format: .gif, pixelWidth: 100, pixelHeight: 100, frames: frames, loopCount: 0).isOpaque)
        #expect(Image(format: .gif, pixelWidth: 100, pixelHeight: 100, frames: [frames[0], frames[0]], loopCount: 0).isOpaque)
    }

    @Test func exifOrientationIsReported() throws {
        let jpeg = try SampleImages.jpeg(width: 16, height: 8)
        let image = try ImageCoderRegistry.default.decode(withOrientation(6, jpeg))
        #expect(image.orientation == .right)
        #expect(try ImageCoderRegistry.default.decode(jpeg).orientation == .up)
        // A damaged tag (0, 9, 255) is "as stored", as browsers take it.
        for damaged: UInt8 in [0, 9, 255] {
            #expect(try ImageCoderRegistry.default.decode(withOrientation(damaged, jpeg)).orientation == .up)
        }
        #expect(ImageOrientation.allCases.map(\.rawValue) == Array(1...8))
        #expect(ImageOrientation.allCases.filter(\.swapsWidthAndHeight) == [.leftMirrored, .right, .rightMirrored, .left])
    }
}

/// A lenient decode of cut data either fails with a typed error or says it is partial.
func expectErrorOrPartial(_ comment: Comment? = nil, _ decode: () throws -> Image, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let image = try decode()
        #expect(image.isPartial || image.repairs.contains(.missingTrailer), comment, sourceLocation: sourceLocation)
    } catch {
        #expect(error is ImageDecodingError, comment, sourceLocation: sourceLocation)
    }
}

func psnr(_ a: Image, _ b: Image) -> Double {
    var sum = 0.0
    var count = 0
    for y in 0..<a.pixelHeight {
        for x in 0..<a.pixelWidth {
            let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
            for (u, v) in [(p.r, q.r), (p.g, q.g), (p.b, q.b)] {
                let d = Double(u) - Double(v)
                sum += d * d
                count += 1
            }
        }
    }
    let mse = sum / Double(count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}
