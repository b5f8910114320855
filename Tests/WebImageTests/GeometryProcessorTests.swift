import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The library side of `/img`'s geometry and effects: `Gravity`, `Padding`, `Extend`, `Flatten`,
/// `Trim`, `Sharpen`, `Pixelate` on small images built pixel by pixel, and their hostile values.
@Suite("Processing: geometry and effects")
struct GeometryProcessorTests {
    static func solid(_ width: Int, _ height: Int, _ rgba: (UInt8, UInt8, UInt8, UInt8)) -> Image {
        Fixtures.straightImage(width: width, height: height) { _, _ in rgba }
    }

    static func pixel(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        let i = y * image.bytesPerRow + x * 4
        return Array(image.pixels[i..<i + 4])
    }

    @Test func gravityPlacesTheFillWindow() throws {
        // 4 × 2: the left half red, the right half blue; 1 × 1 of fill keeps a 2 × 2 window.
        let image = Fixtures.straightImage(width: 4, height: 2) { x, _ in x < 2 ? (255, 0, 0, 255) : (0, 0, 255, 255) }
        let west = try image.processed(by: [.resize(width: 1, height: 1, mode: .fill, gravity: .west)])
        let east = try image.processed(by: [.resize(width: 1, height: 1, mode: .fill, gravity: .southEast)])
        let focus = try image.processed(by: [.resize(width: 1, height: 1, mode: .fill, gravity: .focalPoint(x: 1, y: 0))])
        #expect(Self.pixel(west, 0, 0) == [255, 0, 0, 255])
        #expect(Self.pixel(east, 0, 0) == [0, 0, 255, 255] && Self.pixel(focus, 0, 0) == [0, 0, 255, 255])
        // The centre keeps the identifier it had; another gravity is named in it.
        #expect(ImageProcessors.Resize(width: 2, height: 2, mode: .fill).identifier == "resize(2x2,fill,upscale:false)")
        #expect(ImageProcessors.Resize(width: 2, height: 2, mode: .fill, gravity: .northWest).identifier == "resize(2x2,fill,upscale:false,gravity:nowe)")
        #expect(ImageProcessors.Gravity.focalPoint(x: 0.25, y: 1).identifier == "fp:0.25:1")
        // A focal point out of range or NaN is taken to the edge or the centre, never a trap.
        _ = try image.processed(by: [.resize(width: 1, height: 1, mode: .fill, gravity: .focalPoint(x: .nan, y: -.infinity))])
    }

    @Test func paddingAndExtendPaintTheCanvas() throws {
        let image = Self.solid(2, 1, (10, 20, 30, 255))
        let padded = try image.processed(by: [.padding(top: 1, right: 2, bottom: 0, left: 3, background: .white)])
        #expect(padded.pixelWidth == 7 && padded.pixelHeight == 2)
        #expect(Self.pixel(padded, 0, 0) == [255, 255, 255, 255] && Self.pixel(padded, 3, 1) == [10, 20, 30, 255] && Self.pixel(padded, 5, 1) == [255, 255, 255, 255])
        #expect(!(try image.processed(by: [.padding(top: 1, right: 1, bottom: 1, left: 1)])).isOpaque)
        let extended = try image.processed(by: [.extend(width: 4, height: 3, background: .black)])
        #expect(extended.pixelWidth == 4 && extended.pixelHeight == 3 && Self.pixel(extended, 1, 1) == [10, 20, 30, 255])
        #expect(try image.processed(by: [.extend(width: 1, height: 1)]).pixelWidth == 2, "never shrinks")
        // Absurd sizes are refused, never trapped on.
        let huge = ImageProcessors.Padding(top: .max, right: .max, bottom: .max, left: .max)
        #expect(huge.outputSize(width: 2, height: 1) == (.max, .max))
        #expect(throws: ImageProcessingError.self) { try image.processed(by: [huge]) }
        #expect(throws: ImageProcessingError.self) { try image.processed(by: [.padding(top: -1, right: 0, bottom: 0, left: 0)]) }
        #expect(throws: ImageProcessingError.self) { try image.processed(by: [.extend(width: 100_000, height: 100_000)]) }
    }

    @Test func flattenLaysTheImageOnAColour() throws {
        let half = Self.solid(1, 1, (255, 0, 0, 128))
        let flat = try half.processed(by: [.flatten(.white)])
        #expect(flat.isOpaque)
        let p = Self.pixel(flat, 0, 0)
        #expect(p[0] == 255 && (126...128).contains(p[1]) && p[1] == p[2] && p[3] == 255, "\(p)")
    }

    @Test func trimKeepsTheContent() throws {
        let framed = Fixtures.straightImage(width: 5, height: 4) { x, y in x == 2 && y == 1 ? (0, 0, 0, 255) : (255, 255, 255, 255) }
        let trimmed = try framed.processed(by: [.trim(threshold: 0)])
        #expect(trimmed.pixelWidth == 1 && trimmed.pixelHeight == 1 && Self.pixel(trimmed, 0, 0) == [0, 0, 0, 255])
        let one = Self.solid(1, 1, (1, 2, 3, 255))
        #expect(try one.processed(by: [.trim(threshold: 0)]).pixelWidth == 1)
        #expect(throws: ImageProcessingError.self) { try one.processed(by: [.trim(threshold: 256)]) }
    }

    @Test func sharpenAndPixelateRefuseBadValues() throws {
        let image = Fixtures.straightImage(width: 6, height: 2) { x, _ in x < 3 ? (0, 0, 0, 255) : (200, 200, 200, 255) }
        let blocks = try image.processed(by: [.pixelate(size: 3)])
        #expect(Self.pixel(blocks, 0, 0) == Self.pixel(blocks, 2, 1) && Self.pixel(blocks, 3, 0) == [200, 200, 200, 255])
        #expect(try image.processed(by: [.pixelate(size: .max)]).pixelWidth == 6)
        #expect(throws: ImageProcessingError.self) { try image.processed(by: [.pixelate(size: 0)]) }
        for sigma in [Double.nan, .infinity, -1, 101] {
            #expect(throws: ImageProcessingError.self, "\(sigma)") { try image.processed(by: [.sharpen(sigma: sigma)]) }
        }
        let sharp = try image.processed(by: [.sharpen(sigma: 1)])
        #expect(Self.pixel(sharp, 3, 0)[0] > 200 && Self.pixel(sharp, 2, 0)[0] == 0)
        #expect(ImageProcessors.Sharpen(sigma: 1).workingBytes(width: .max, height: 2) == .max)
    }

    /// One identifier, one picture: the identifier (the cache key and ETag of `serve`) names the
    /// angle the pixels are turned by. A huge angle whose remainder is 40 once turned by about
    /// −0.4° (radians lost their precision) under the identifier of 40°, so a stranger could put
    /// a wrong result in the cache for `rotate:40` (found by a red-team review).
    @Test func anglesWithOneIdentifierTurnThePixelsAlike() throws {
        let image = SampleImages.pattern(width: 60, height: 40, seed: 7)
        var huge: [Double] = []
        for exponent in stride(from: 20, through: 110, by: 1) where huge.count < 4 {
            for mantissa in stride(from: 1.0, to: 4001, by: 2) {
                let angle = mantissa * pow(2, Double(exponent))
                if angle.truncatingRemainder(dividingBy: 360) == 40 { huge.append(angle); break }
            }
        }
        #expect(!huge.isEmpty)
        let reference = try image.processed(by: [.rotate(degrees: 40)])
        for angle in huge + [400, -320, 40 + 360 * 1e6] {
            let rotate = ImageProcessors.Rotate(degrees: angle)
            #expect(rotate.identifier == ImageProcessors.Rotate(degrees: 40).identifier, "\(angle)")
            let turned = try image.processed(by: [rotate])
            #expect(turned.pixelWidth == reference.pixelWidth && turned.pixelHeight == reference.pixelHeight, "\(angle)")
            #expect(turned.pixels == reference.pixels, "\(angle) turns the pixels otherwise than 40")
        }
    }
}
