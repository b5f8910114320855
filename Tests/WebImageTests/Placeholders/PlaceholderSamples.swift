import Foundation
import Testing
@testable import WebImage

/// The images the placeholder tests hash: small photos from the fixtures (one with EXIF
/// orientation, two with alpha) and generated gradients and flat colours of several aspect
/// ratios, some large enough to be scaled down first.
struct PlaceholderSample: CustomTestStringConvertible, Sendable {
    var name: String
    var image: Image
    /// BlurHash components for this sample.
    var components: (x: Int, y: Int)
    var testDescription: String { name }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func fixture(_ path: String, _ components: (Int, Int)) throws -> PlaceholderSample {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(path))
        return PlaceholderSample(name: path, image: try ImageCoderRegistry.default.decode(data), components: components)
    }

    /// A `width × height` image from straight RGBA values per pixel.
    static func generated(_ name: String, _ width: Int, _ height: Int, _ components: (Int, Int),
                          _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> PlaceholderSample {
        var rgba: [UInt8] = []
        rgba.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width { let p = pixel(x, y); rgba += [p.0, p.1, p.2, p.3] }
        }
        let opaque = PixelOperations.premultiply(&rgba)
        let image = Image(format: .png, pixelWidth: width, pixelHeight: height, pixels: rgba, isOpaque: opaque)
        return PlaceholderSample(name: name, image: image, components: components)
    }

    static func all() throws -> [PlaceholderSample] {
        [
            try fixture("color/bluish.jpg", (4, 3)),
            try fixture("color/adobe-rgb-noise.png", (9, 9)),
            try fixture("color/prophoto.jpg", (5, 4)),
            try fixture("processing/opaque.png", (4, 4)),
            try fixture("processing/rgba.png", (3, 5)),
            try fixture("codecs/jxl-alpha.ref.png", (4, 3)),
            try fixture("codecs/exif-orientation6.png", (4, 3)),
            generated("gradient-wide-300x120", 300, 120, (6, 2)) { x, y in (UInt8(x * 255 / 299), UInt8(y * 2), 180, 255) },
            generated("gradient-tall-90x260-alpha", 90, 260, (2, 6)) { x, y in
                (200, UInt8(x * 2), UInt8(255 - y * 255 / 259), UInt8(y * 255 / 259))
            },
            generated("diagonal-1000x40", 1000, 40, (9, 1)) { x, y in (UInt8((x + y * 5) % 256), 90, UInt8(x / 4 % 256), 255) },
            generated("flat-50x50", 50, 50, (4, 3)) { _, _ in (32, 160, 96, 255) },
            generated("flat-alpha-40x80", 40, 80, (1, 1)) { _, _ in (250, 20, 120, 128) },
            generated("two-halves-64x64", 64, 64, (3, 3)) { x, _ in x < 32 ? (255, 255, 255, 255) : (0, 0, 0, 255) },
            generated("one-pixel", 1, 1, (1, 1)) { _, _ in (12, 200, 7, 255) },
        ]
    }

    /// `image` as a PNG of its straight RGBA values (written by ``RawPNG``): the very pixels hashed.
    static func straightPNG(_ image: Image) -> Data {
        let rgba = PixelOperations.unpremultiplied(image)
        return RawPNG(width: image.pixelWidth, height: image.pixelHeight, colorType: 6) { x, y in
            let offset = (y * image.pixelWidth + x) * 4
            return Array(rgba[offset..<(offset + 4)])
        }.encode()
    }
}
