import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("EXIF orientation applied on request")
struct OrientationTests {
    /// 3 × 2, each pixel holding its own coordinates.
    static let stored: Image = {
        let pixels = (0..<6).flatMap { (i: Int) -> [UInt8] in [UInt8(i % 3), UInt8(i / 3), 0, 255] }
        return Image(format: .jpeg, pixelWidth: 3, pixelHeight: 2, pixels: pixels, isOpaque: true)
    }()

    /// Where stored pixel (x, y) is shown, from the EXIF definitions of the 0th row and column.
    static func displayed(_ x: Int, _ y: Int, orientation: Int, w: Int = 3, h: Int = 2) -> (Int, Int) {
        switch orientation {
        case 1: (x, y)
        case 2: (w - 1 - x, y)
        case 3: (w - 1 - x, h - 1 - y)
        case 4: (x, h - 1 - y)
        case 5: (y, x)
        case 6: (h - 1 - y, x)
        case 7: (h - 1 - y, w - 1 - x)
        default: (y, w - 1 - x)
        }
    }

    @Test(arguments: 1...8)
    func everyOrientationMovesPixelsToTheirDisplayedPlace(orientation: Int) {
        var image = Self.stored
        image.orientation = ImageOrientation(exifValue: orientation)
        let upright = image.oriented()
        #expect(upright.orientation == .up)
        #expect(orientation >= 5 ? (upright.pixelWidth, upright.pixelHeight) == (2, 3) : (upright.pixelWidth, upright.pixelHeight) == (3, 2))
        for y in 0..<2 {
            for x in 0..<3 {
                let (dx, dy) = Self.displayed(x, y, orientation: orientation)
                let p = upright.pixel(x: dx, y: dy)
                #expect(p.r == UInt8(x) && p.g == UInt8(y), "stored \(x),\(y) → \(dx),\(dy)")
            }
        }
    }

    @Test func fetchResizeWritesUprightThumbnails() async throws {
        let rotated = try withOrientation(6, SampleImages.jpeg(width: 160, height: 80, seed: 3))
        try await withOrigin(files: ["rotated.jpg": rotated]) { origin in
            let output = temporaryDirectory()
            let result = try await WebImageCommand.run(
                ["fetch", origin.imageURL("rotated.jpg").absoluteString, "--output", output.path,
                 "--cache-dir", temporaryDirectory().path, "--resize", "100x100", "--format", "png"])
            #expect(result.status == 0, "\(result.stderr)")
            let image = try ImageCoderRegistry.default.decode(try Data(contentsOf: output.appendingPathComponent("rotated.png")))
            #expect(image.pixelWidth == 50 && image.pixelHeight == 100)
        }
    }
}

/// `jpeg` with an APP1 Exif segment (big-endian TIFF, one IFD entry) declaring `orientation`.
func withOrientation(_ orientation: UInt8, _ jpeg: Data) -> Data {
    let tiff: [UInt8] = [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0, 0, 0, 0, 0]
    let payload = Array("Exif".utf8) + [0, 0] + tiff
    let length = payload.count + 2
    let app1: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    return Data(jpeg.prefix(2) + Data(app1) + jpeg.dropFirst(2))
}
