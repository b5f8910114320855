import Foundation
import Testing
import WebImage
import WebImageOrigin

/// `ImageDecodingOptions.maxDecodedBytes` (SDWebImage's scale-down limit) on the coders
/// themselves: over the budget an image decodes smaller instead of being refused; bombs are still
/// refused by the pixel limit.
@Suite("Decoding within a byte budget", .cpuBound)
struct DecodeBudgetTests {
    static func decoded(_ data: Data, budget: Int?, maxPixels: Int = 50_000_000, firstFrameOnly: Bool = false) throws -> Image {
        var options = ImageDecodingOptions(maxPixelCount: maxPixels, firstFrameOnly: firstFrameOnly)
        options.maxDecodedBytes = budget
        return try ImageCoderRegistry.default.decode(data, options: options)
    }

    @Test(arguments: ["jpeg", "png", "webp", "avif"])
    func aStillOverTheBudgetDecodesSmaller(format: String) throws {
        let data: Data = switch format {
        case "jpeg": try SampleImages.jpeg(width: 1200, height: 800)
        case "png": try SampleImages.png(width: 1200, height: 800)
        case "webp": try SampleImages.webp(width: 1200, height: 800)
        default: try SampleImages.avif(width: 600, height: 400)
        }
        let full = try Self.decoded(data, budget: nil)
        let budget = full.pixelWidth * full.pixelHeight  // a quarter of the full decode's bytes
        let small = try Self.decoded(data, budget: budget)
        #expect(small.pixelWidth * small.pixelHeight * 4 <= budget)
        #expect(small.pixelWidth * small.pixelHeight * 4 > budget / 2, "not smaller than needed: \(small.pixelWidth)×\(small.pixelHeight)")
        #expect(abs(Double(small.pixelWidth) / Double(small.pixelHeight) - 1.5) < 0.02)
        // Within the budget: decoded as it is.
        #expect(try Self.decoded(data, budget: full.pixelWidth * full.pixelHeight * 4).pixelWidth == full.pixelWidth)
    }

    @Test func everyFrameOfAnAnimationCounts() throws {
        let gif = try SampleImages.gif(width: 200, height: 100, count: 6)
        let budget = 200 * 100 * 4  // one full frame's bytes for six frames
        let small = try Self.decoded(gif, budget: budget)
        #expect(small.frames.count == 6)
        #expect(small.frames.count * small.pixelWidth * small.pixelHeight * 4 <= budget)
        // The first frame alone fits.
        #expect(try Self.decoded(gif, budget: budget, firstFrameOnly: true).pixelWidth == 200)
    }

    @Test func thePixelLimitStillRefusesBombs() throws {
        let jpeg = try SampleImages.jpeg(width: 1200, height: 800)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 1200, height: 800, frames: 1, limit: 500_000)) {
            _ = try Self.decoded(jpeg, budget: 1 << 20, maxPixels: 500_000)
        }
    }
}
