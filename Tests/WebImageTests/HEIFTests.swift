import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("HEIC/HEIF over libheif")
struct HEIFTests {
    @Test func decodesAnEncodedPhotoWithHighPSNR() throws {
        let source = SampleImages.pattern(width: 320, height: 240, seed: 4)
        let data = try ImageCoderRegistry.default.encode(source, as: .heic, quality: 0.9)
        #expect(ImageFormat(sniffing: data) == .heic)
        let decoded = try ImageCoderRegistry.default.decode(data)
        #expect(decoded.format == .heic && decoded.pixelWidth == 320 && decoded.pixelHeight == 240)
        #expect(decoded.isOpaque && decoded.orientation == .up && decoded.frameCount == 1)
        #expect(psnr(decoded, source) >= 35)
        #expect(try HEIFCoder().readHeader(data) == ImageHeader(format: .heic, pixelWidth: 320, pixelHeight: 240, hasAlpha: false))
    }

    @Test func alphaIsPremultiplied() throws {
        let source = SampleImages.pattern(width: 64, height: 48, seed: 5, alpha: true)
        let decoded = try HEIFCoder().decode(HEIFCoder().encode(source, as: .heic, quality: 0.95), options: .default)
        #expect(!decoded.isOpaque && decoded.pixelWidth == 64 && decoded.pixelHeight == 48)
        // Premultiplied: no colour channel exceeds its alpha.
        for i in stride(from: 0, to: decoded.pixels.count, by: 4) {
            #expect(decoded.pixels[i..<i + 3].allSatisfy { $0 <= decoded.pixels[i + 3] })
        }
        #expect(psnr(decoded, source) >= 30)
    }

    @Test func emptyTextAndOtherFormatsAreTypedErrors() throws {
        #expect(throws: ImageDecodingError.empty) { _ = try HEIFCoder().decode(Data(), options: .default) }
        #expect(throws: ImageDecodingError.self) { _ = try HEIFCoder().decode(Data("text named photo.heic\n".utf8), options: .default) }
        let avif = try SampleImages.avif(width: 16, height: 16)
        // libheif reads AVIF too (it is HEIF with AV1); whatever it gives must be typed.
        do { _ = try HEIFCoder().decode(avif, options: .default) } catch { #expect(!error.description.isEmpty) }
    }
}

/// AVIF and HEIC share the ISO-BMFF container: the size comes from `ispe`, read before decoding.
@Suite("AVIF and HEIC: thumbnails and limits from the container")
struct ContainerLimitTests {
    static func encoded(_ format: ImageFormat, width: Int, height: Int) throws -> Data {
        try ImageCoderRegistry.default.encode(SampleImages.pattern(width: width, height: height), as: format, quality: 0.7)
    }

    /// `data` with every `ispe` property (a declared image size) rewritten. (libheif stores a
    /// small HEIC as a grid whose one tile is padded to the HEVC block size: two `ispe`s.)
    static func declaring(_ width: UInt32, _ height: UInt32, in data: Data) throws -> Data {
        var data = data
        let ranges = data.ranges(of: Data("ispe".utf8))
        try #require(!ranges.isEmpty)
        for ispe in ranges {
            data.replaceSubrange(ispe.upperBound + 4..<ispe.upperBound + 12, with: width.bigEndianBytes + height.bigEndianBytes)
        }
        return data
    }

    @Test(arguments: [ImageFormat.avif, .heic])
    func thumbnailsAndLimitsApply(_ format: ImageFormat) throws {
        let data = try Self.encoded(format, width: 200, height: 100)
        let thumbnail = try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 50))
        #expect(thumbnail.pixelWidth == 50 && thumbnail.pixelHeight == 25)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 200, height: 100, frames: 1, limit: 19_999)) {
            _ = try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 19_999))
        }
    }

    @Test(arguments: [ImageFormat.avif, .heic])
    func largeDeclaredSizeIsRefusedByOurLimit(_ format: ImageFormat) throws {
        // 10000 × 10000 passes the libraries' own caps, so our 50 MP default must refuse it.
        let data = try Self.declaring(10_000, 10_000, in: Self.encoded(format, width: 16, height: 16))
        #expect(throws: ImageDecodingError.tooManyPixels(width: 10_000, height: 10_000, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test(arguments: [ImageFormat.avif, .heic])
    func hugeDeclaredSizeIsATypedErrorWithoutDecoding(_ format: ImageFormat) throws {
        // 100000 × 100000: over libavif's and libheif's own caps, which refuse it while parsing.
        let data = try Self.declaring(100_000, 100_000, in: Self.encoded(format, width: 16, height: 16))
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(data) }
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(data, options: .init(maxPixelCount: 1 << 40)) }
    }
}
