import Testing
@testable import WebImage

/// `Extend`'s offsets (imgproxy's `x_offset`, `y_offset`) move the image from where the gravity
/// puts it, inwards from a compass point's edges, and never past the canvas, whatever the value.
@Suite("Extend: offsets")
struct ExtendOffsetTests {
    @Test func offsetsMoveInwardsAndStayInside() {
        let keep = (width: 20, height: 10), total = (width: 100, height: 60)
        let cases: [(ImageProcessors.Gravity, (Int, Int), (Int, Int))] = [
            (.northWest, (5, 7), (5, 7)), (.southEast, (5, 7), (75, 43)), (.center, (-10, 4), (30, 29)),
            (.east, (3, -2), (77, 23)), (.south, (0, 50), (40, 0)), (.northWest, (1000, 1000), (80, 50)),
            (.northWest, (Int.max, Int.max), (80, 50)), (.southEast, (Int.max, Int.max), (0, 0)),
            (.southEast, (Int.min, Int.min), (80, 50)), (.center, (Int.min, Int.max), (0, 50)),
        ]
        for (gravity, offset, expected) in cases {
            let at = gravity.origin(keep: keep, total: total, offset: offset)
            #expect(at.x == expected.0 && at.y == expected.1, "\(gravity) \(offset): \(at)")
        }
    }

    /// Through the processor: the pixels land where the offset says; the identifier names the
    /// offset only when it is not zero.
    @Test func theProcessorPlacesAndNamesTheOffset() throws {
        let red: [UInt8] = [255, 0, 0, 255]
        let image = Image(format: .png, pixelWidth: 2, pixelHeight: 2, pixels: [[UInt8]](repeating: red, count: 4).flatMap { $0 }, isOpaque: true)
        let step = ImageProcessors.Extend(width: 10, height: 6, background: .clear, gravity: .northEast, offsetX: 3, offsetY: 1)
        let out = try step.process(image)
        func alpha(_ x: Int, _ y: Int) -> UInt8 { out.pixels[(y * 10 + x) * 4 + 3] }
        #expect(out.pixelWidth == 10 && out.pixelHeight == 6)
        #expect(alpha(5, 1) == 255 && alpha(6, 2) == 255 && alpha(7, 1) == 0 && alpha(5, 0) == 0 && alpha(4, 1) == 0)
        #expect(step.identifier == "extend(10x6,00000000,gravity:noea,offset:3:1)")
        #expect(ImageProcessors.Extend(width: 10, height: 6).identifier == "extend(10x6,00000000)")
    }
}
