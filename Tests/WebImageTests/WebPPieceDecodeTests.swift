import CWebP
import Foundation
import Testing
@testable import WebImage
import WebImageOrigin

/// WebP stills are given to libwebp's incremental decoder a piece at a time (1/128 of the coded
/// data, 256 bytes to 64 KB, so that a cancel can stop them between pieces): the image is the one
/// `WebPDecode` makes in one call.
@Suite("WebP decoded in pieces", .cpuBound)
struct WebPPieceDecodeTests {
    /// `WebPDecode` of the whole file in one call, straight RGBA at `width` × `height`.
    static func oneCall(_ data: Data, width: Int, height: Int, scaled: Bool) throws -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let status = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                var config = WebPDecoderConfig()
                _ = WebPInitDecoderConfig(&config)
                config.output.colorspace = MODE_RGBA
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = dst.baseAddress
                config.output.u.RGBA.stride = Int32(width * 4)
                config.output.u.RGBA.size = dst.count
                if scaled {
                    config.options.use_scaling = 1
                    config.options.scaled_width = Int32(width)
                    config.options.scaled_height = Int32(height)
                }
                return WebPDecode(src.baseAddress!.assumingMemoryBound(to: UInt8.self), src.count, &config)
            }
        }
        #expect(status == VP8_STATUS_OK)
        return pixels
    }

    /// Files of several pieces (a noisy picture) and of one, lossy, lossless and with alpha.
    static func files() throws -> [(String, Data)] {
        let big = SampleImages.pattern(width: 900, height: 700, seed: 4, alpha: true)
        let small = SampleImages.pattern(width: 90, height: 70, seed: 5, alpha: true)
        return [
            ("big lossy", try WebPCoder().encode(big, as: .webp, quality: 0.9)),
            ("big lossless", try WebPCoder().encode(big, as: .webp, quality: 1)),
            ("small lossy", try WebPCoder().encode(small, as: .webp, quality: 0.8)),
            ("small lossless", try WebPCoder().encode(small, as: .webp, quality: 1)),
        ]
    }

    @Test func theImageIsWebPDecodes() throws {
        var pieces = 0
        for (name, data) in try Self.files() {
            let header = try WebPCoder().readHeader(data)
            if data.count > 1 << 16 { pieces += 1 }
            for thumbnail in [nil, 64] as [Int?] {
                let image = try WebPCoder().decode(data, options: ImageDecodingOptions(thumbnailMaxPixelSize: thumbnail))
                var expected = try Self.oneCall(
                    data, width: image.pixelWidth, height: image.pixelHeight, scaled: image.pixelWidth != header.pixelWidth)
                _ = PixelOperations.premultiply(&expected)
                #expect(image.pixels == expected, "\(name), thumbnail \(String(describing: thumbnail))")
            }
        }
        #expect(pieces >= 2, "files of several 64 KB pieces")
    }

    @Test func aCutFileIsRefusedAsBefore() throws {
        let (_, data) = try Self.files()[0]
        #expect(throws: ImageDecodingError.corrupt(format: .webp, reason: "not enough data (truncated)")) {
            try WebPCoder().decode(data.prefix(data.count / 2), options: .default)
        }
    }
}
