import Testing
@testable import WebImage

/// `Gravity.smart` (`SmartCrop`): the attention score on synthetic pictures whose one salient
/// object sits off-centre — the chosen window must hold it — and on pictures with nothing in
/// them, extreme shapes and transparency, where it must fall back to the centre without trapping.
@Suite("Processing: smart crop")
struct SmartCropTests {
    /// A deterministic pseudo-random byte for (x, y, seed): texture without a global pattern.
    static func noise(_ x: Int, _ y: Int, _ seed: Int = 0) -> Int {
        var h = UInt64(truncatingIfNeeded: x &* 73_856_093 ^ y &* 19_349_663 ^ seed &* 83_492_791)
        h ^= h >> 13; h = h &* 0x5bd1_e995; h ^= h >> 15
        return Int(h & 0xff)
    }

    /// `width × height` of `background`, with a detailed, saturated 40 × 40 object (red and
    /// yellow checks) whose top left corner is at `object`.
    static func picture(
        _ width: Int, _ height: Int, object: (x: Int, y: Int), size: Int = 40,
        background: @escaping (Int, Int) -> (UInt8, UInt8, UInt8) = { _, _ in (128, 128, 128) }
    ) -> Image {
        Fixtures.straightImage(width: width, height: height) { x, y in
            if (object.x..<object.x + size).contains(x), (object.y..<object.y + size).contains(y) {
                return (x / 5 + y / 5) % 2 == 0 ? (230, 20, 20, 255) : (250, 220, 0, 255)
            }
            let (r, g, b) = background(x, y)
            return (r, g, b, 255)
        }
    }

    static func xy(_ point: (x: Int, y: Int)) -> [Int] { [point.x, point.y] }

    /// Whether the `keep` window at `origin` holds the object at `object` (`size` square) whole.
    static func holds(_ origin: (x: Int, y: Int), keep: (Int, Int), object: (x: Int, y: Int), size: Int = 40) -> Bool {
        origin.x <= object.x && origin.y <= object.y && origin.x + keep.0 >= object.x + size && origin.y + keep.1 >= object.y + size
    }

    @Test func anObjectInACornerIsChosen() {
        // A 400 × 200 picture cropped to 200 × 200, and a 200 × 400 one to 200 × 200: the object
        // in each corner, on a plain and on a noisy grey background.
        let backgrounds: [(Int, Int) -> (UInt8, UInt8, UInt8)] = [
            { _, _ in (128, 128, 128) },
            { x, y in let v = UInt8(90 + Self.noise(x, y) / 4); return (v, v, v) },
        ]
        for (index, background) in backgrounds.enumerated() {
            for (size, corners) in [
                ((400, 200), [(4, 4), (356, 4), (4, 156), (356, 156)]),
                ((200, 400), [(4, 4), (156, 4), (4, 356), (156, 356)]),
            ] {
                for corner in corners {
                    let image = Self.picture(size.0, size.1, object: corner, background: background)
                    let origin = ImageProcessors.SmartCrop.origin(of: image, keep: (200, 200))
                    #expect(Self.holds(origin, keep: (200, 200), object: corner), "background \(index), \(size), object at \(corner): window at \(origin)")
                }
            }
        }
    }

    @Test func theObjectIsCentredWhenTheWindowHasRoom() {
        // A 600 × 200 picture, the object at x 420–460, a 200 × 200 window: the best window
        // holds it in its middle (x from 340 to 340 ± a cell), not at an edge.
        let image = Self.picture(600, 200, object: (420, 80))
        let origin = ImageProcessors.SmartCrop.origin(of: image, keep: (200, 200))
        #expect(abs(origin.x - 340) <= 12, "\(origin)")
    }

    @Test func skinAmongGreyWinsOverPlainGrey() {
        // A skin-toned disc with dark eyes on a light grey 480 × 240 picture, on the right.
        let image = Fixtures.straightImage(width: 480, height: 240) { x, y in
            let dx = Double(x - 390), dy = Double(y - 120)
            if (dx - 15) * (dx - 15) + (dy + 10) * (dy + 10) < 25 || (dx + 15) * (dx + 15) + (dy + 10) * (dy + 10) < 25 { return (40, 30, 30, 255) }
            if dx * dx / 1600 + dy * dy / 2500 < 1 { return (224, 172, 140, 255) }
            return (200, 200, 200, 255)
        }
        let origin = ImageProcessors.SmartCrop.origin(of: image, keep: (240, 240))
        #expect(origin.x >= 230, "\(origin)")
    }

    @Test func nothingToSeeIsTheCentre() {
        let flat = Fixtures.straightImage(width: 300, height: 100) { _, _ in (10, 200, 30, 255) }
        #expect(Self.xy(ImageProcessors.SmartCrop.origin(of: flat, keep: (100, 100))) == [100, 0])
        let clear = Fixtures.straightImage(width: 100, height: 300) { _, _ in (0, 0, 0, 0) }
        #expect(Self.xy(ImageProcessors.SmartCrop.origin(of: clear, keep: (100, 100))) == [0, 100])
        // An even texture over the whole picture is not an object either: any window will do,
        // but the result stays inside the picture.
        let texture = Fixtures.straightImage(width: 300, height: 100) { x, y in let v = UInt8(Self.noise(x, y)); return (v, v, v, 255) }
        let origin = ImageProcessors.SmartCrop.origin(of: texture, keep: (100, 100))
        #expect((0...200).contains(origin.x) && origin.y == 0)
    }

    @Test func extremeShapesAndWindowsNeverTrap() {
        let strip = Self.picture(3000, 1, object: (2500, 0), size: 1)
        let origin = ImageProcessors.SmartCrop.origin(of: strip, keep: (1, 1))
        #expect((0..<3000).contains(origin.x) && origin.y == 0)
        let tall = Self.picture(1, 3000, object: (0, 10), size: 1)
        #expect(Self.xy(ImageProcessors.SmartCrop.origin(of: tall, keep: (1, 3000))) == [0, 0])
        // A window larger than the picture, or of no size, is cut to it.
        let small = Self.picture(50, 50, object: (5, 5), size: 10)
        #expect(Self.xy(ImageProcessors.SmartCrop.origin(of: small, keep: (500, 500))) == [0, 0])
        let zero = ImageProcessors.SmartCrop.origin(of: small, keep: (0, -5))
        #expect((0..<50).contains(zero.x) && (0..<50).contains(zero.y))
        let one = Self.picture(1, 1, object: (0, 0), size: 1)
        #expect(Self.xy(ImageProcessors.SmartCrop.origin(of: one, keep: (1, 1))) == [0, 0])
    }

    @Test func resizeWithSmartGravityKeepsTheObject() throws {
        // 400 × 200 → 100 × 100 fill keeps a 200 × 200 window: the one with the object at the right.
        let image = Self.picture(400, 200, object: (340, 20))
        let smart = try image.processed(by: [.resize(width: 100, height: 100, mode: .fill, gravity: .smart)])
        #expect(smart.pixelWidth == 100 && smart.pixelHeight == 100)
        let origin = ImageProcessors.SmartCrop.origin(of: image, keep: (200, 200))
        let expected = try image.processed(by: [.crop(x: origin.x, y: origin.y, width: 200, height: 200), .resize(width: 100, height: 100)])
        #expect(smart.pixels == expected.pixels)
        // The object's red and yellow are in the result (on the right); a centre crop has none.
        let colourful = stride(from: 0, to: smart.pixels.count, by: 4).filter { smart.pixels[$0] > 200 && smart.pixels[$0 + 2] < 60 }.count
        let centre = try image.processed(by: [.resize(width: 100, height: 100, mode: .fill)])
        let none = stride(from: 0, to: centre.pixels.count, by: 4).filter { centre.pixels[$0] > 200 && centre.pixels[$0 + 2] < 60 }.count
        #expect(colourful >= 300 && none == 0, "\(colourful) \(none)")
        #expect(ImageProcessors.Resize(width: 2, height: 2, mode: .fill, gravity: .smart).identifier == "resize(2x2,fill,upscale:false,gravity:sm)")
        #expect(ImageProcessors.Gravity.smart.identifier == "sm")
        // Its map is priced as working memory (the server's render budget adds it), the same for any size.
        let smartResize = ImageProcessors.Resize(width: 10, height: 10, mode: .fill, gravity: .smart)
        #expect(smartResize.workingBytes(width: 100_000, height: 100_000) == ImageProcessors.SmartCrop.workingBytes)
        #expect(smartResize.workingBytes(width: 1, height: 1) == ImageProcessors.SmartCrop.workingBytes)
        #expect(ImageProcessors.Resize(width: 10, height: 10, mode: .fill).workingBytes(width: 100, height: 100) == 0)
        // Without pixels (placing a window by numbers only) smart is the centre.
        #expect(Self.xy(ImageProcessors.Gravity.smart.origin(keep: (10, 10), total: (30, 10))) == [10, 0])
        // The --process grammar names it too.
        let steps = try ImageProcessorSpec.parse("resize:100x100:fill:sm")
        #expect(steps.map(\.identifier) == ["resize(100x100,fill,upscale:false,gravity:sm)"])
        #expect(try ImageProcessorSpec.parse("resize:9x9:fill:upscale:soea").map(\.identifier) == ["resize(9x9,fill,upscale:true,gravity:soea)"])
        #expect(throws: ImageProcessingError.self) { try ImageProcessorSpec.parse("resize:9x9:fill:middle") }
    }

    @Test func extendPlacesTheImageByGravity() throws {
        let image = Fixtures.straightImage(width: 2, height: 1) { _, _ in (10, 20, 30, 255) }
        func at(_ gravity: ImageProcessors.Gravity) throws -> [Int] {
            let out = try image.processed(by: [.extend(width: 6, height: 5, background: .white, gravity: gravity)])
            #expect(out.pixelWidth == 6 && out.pixelHeight == 5)
            let first = stride(from: 0, to: out.pixels.count, by: 4).first { out.pixels[$0] == 10 }!
            return [(first % out.bytesPerRow) / 4, first / out.bytesPerRow]
        }
        #expect(try at(.center) == [2, 2] && at(.northWest) == [0, 0] && at(.southEast) == [4, 4])
        #expect(try at(.north) == [2, 0] && at(.west) == [0, 2] && at(.focalPoint(x: 1, y: 0)) == [4, 0] && at(.smart) == [2, 2])
        #expect(ImageProcessors.Extend(width: 6, height: 5).identifier == "extend(6x5,00000000)")
        #expect(ImageProcessors.Extend(width: 6, height: 5, gravity: .south).identifier == "extend(6x5,00000000,gravity:so)")
    }
}
