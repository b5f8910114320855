import Foundation
import Testing
@testable import WebImage

/// BlurHash and ThumbHash on their own: hostile strings and sizes are typed errors, and the
/// drawings look like what was hashed.
@Suite("Placeholders: hostile input and round trips", .cpuBound)
struct PlaceholderTests {
    /// woltapp's example hash parses: 4 × 3 components, its average colour.
    @Test func woltappExampleParses() throws {
        let hash = try BlurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        #expect(hash.components == (4, 3))
        #expect(hash.averageColor.alpha == 255 && hash.averageColor.red > hash.averageColor.blue)
        let image = try hash.image(width: 32, height: 24)
        #expect(image.pixelWidth == 32 && image.pixelHeight == 24 && image.isOpaque && image.bufferProblem == nil)
    }

    @Test(arguments: [(0, 3), (4, 0), (10, 1), (1, 10), (-1, 4), (Int.max, Int.min)])
    func componentsOutsideOneToNineAreRefused(_ x: Int, _ y: Int) throws {
        let image = PlaceholderSample.generated("flat", 8, 8, (1, 1)) { _, _ in (1, 2, 3, 255) }.image
        #expect(throws: PlaceholderError.invalidComponents(x: x, y: y)) { try image.blurHash(components: (x, y)) }
        #expect(throws: PlaceholderError.invalidComponents(x: x, y: y)) {
            try BlurHash(rgba: [UInt8](repeating: 0, count: 256), width: 8, height: 8, components: (x, y))
        }
    }

    /// Every way a stranger's BlurHash string can be wrong is a typed error.
    @Test(arguments: [
        ("", PlaceholderError.invalidLength(expected: 6, actual: 0)),
        ("LEHV6nWB2yk8pyo0adR*.7kCMdn", .invalidLength(expected: 28, actual: 27)),
        ("LEHV6nWB2yk8pyo0adR*.7kCMdnjj", .invalidLength(expected: 28, actual: 29)),
        ("LEHV6nWB2yk8pyo0adR*.7kCMd\"j", .invalidCharacter("\"")),
        ("00~~~~", .invalidValue("average colour 47458320 is over 24 bits")),
        ("100000~~", .invalidValue("component 1 value 6888 is over 19³")),
        ("LEHV6nWB2yk8pyo0adR*.7kCMdé", .invalidCharacter("byte 0xC3")),
        ("~~00000", .invalidComponents(x: 2, y: 10)),
    ])
    func malformedBlurHashesAreTypedErrors(_ text: String, _ error: PlaceholderError) {
        #expect(throws: error) { try BlurHash(text) }
    }

    /// Sizes are checked before anything is allocated: huge, zero, negative and absurd punch.
    @Test(arguments: [(0, 10), (10, 0), (-5, 10), (1025, 1), (1, 1_000_000), (Int.max, Int.max)])
    func decodedSizeIsCapped(_ width: Int, _ height: Int) throws {
        let hash = try BlurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        #expect(throws: PlaceholderError.invalidSize(width: width, height: height, limit: 1024)) {
            try hash.image(width: width, height: height)
        }
    }

    @Test func punchMustBeAPositiveNumber() throws {
        let hash = try BlurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        for punch in [0, -1, .nan, .infinity] {
            #expect(throws: PlaceholderError.self) { try hash.image(width: 4, height: 4, punch: punch) }
        }
        #expect(try hash.image(width: 1024, height: 2, punch: 1.5).pixelWidth == 1024)
    }

    /// Every way a ThumbHash can be wrong is a typed error; base64 round-trips.
    @Test func malformedThumbHashesAreTypedErrors() throws {
        let image = PlaceholderSample.generated("g", 60, 30, (1, 1)) { x, y in (UInt8(x * 4), UInt8(y * 8), 50, 255) }.image
        let hash = try image.thumbHash()
        #expect(try ThumbHash(base64: hash.base64String) == hash)
        #expect(throws: PlaceholderError.invalidLength(expected: 5, actual: 0)) { try ThumbHash(bytes: []) }
        #expect(throws: PlaceholderError.invalidLength(expected: hash.bytes.count, actual: hash.bytes.count - 1)) {
            try ThumbHash(bytes: Array(hash.bytes.dropLast()))
        }
        #expect(throws: PlaceholderError.invalidLength(expected: hash.bytes.count, actual: hash.bytes.count + 1)) {
            try ThumbHash(bytes: hash.bytes + [0])
        }
        #expect(throws: PlaceholderError.invalidCharacter("not base64!")) { try ThumbHash(base64: "not base64!") }
        // A portrait header whose short side has zero components: no zero-width drawing.
        var zero = hash.bytes
        zero[4] &= 0x7F
        zero[3] &= ~7
        #expect(throws: PlaceholderError.self) { try ThumbHash(bytes: zero) }
        // Every 5-byte header with every alpha/landscape/count combination: a typed error or a small image.
        for byte3 in [0, 1, 7, 0xFF] as [UInt8] {
            for byte2 in [0, 0x80] as [UInt8] {
                for byte4 in [0, 0x80] as [UInt8] {
                    let header: [UInt8] = [0xFF, 0xFF, byte2 | 0x7F, byte3, byte4]
                    guard let parsed = try? ThumbHash(bytes: header + [UInt8](repeating: 0xFF, count: 40)) else { continue }
                    let drawn = parsed.image()
                    #expect(drawn.pixelWidth <= 32 && drawn.pixelHeight <= 32 && drawn.bufferProblem == nil)
                }
            }
        }
    }

    @Test func thumbHashEncoderRefusesMoreThanAHundredPixels() {
        #expect(throws: PlaceholderError.invalidSize(width: 101, height: 1, limit: 100)) {
            try ThumbHash(rgba: [UInt8](repeating: 0, count: 404), width: 101, height: 1)
        }
        #expect(throws: PlaceholderError.emptyImage) { try ThumbHash(rgba: [], width: 0, height: 0) }
        #expect(throws: PlaceholderError.invalidSize(width: 10, height: 10, limit: 100)) {
            try ThumbHash(rgba: [UInt8](repeating: 0, count: 12), width: 10, height: 10)
        }
    }

    /// An image whose buffer does not hold what it claims is refused, not read past its end.
    @Test func inconsistentImageIsRefused() {
        let broken = Image(format: .png, pixelWidth: 100, pixelHeight: 100, pixels: [0, 0, 0, 255], isOpaque: true)
        #expect(throws: PlaceholderError.self) { try broken.blurHash() }
        #expect(throws: PlaceholderError.self) { try broken.thumbHash() }
    }

    /// The drawings look like the source: a flat colour comes back flat, a gradient close.
    @Test func drawingsResembleTheSource() throws {
        let flat = PlaceholderSample.generated("flat", 50, 50, (1, 1)) { _, _ in (32, 160, 96, 255) }.image
        // ThumbHash keeps the average in 6 bits of L, P and Q. BlurHash's basis, cos(π·i·x/w)
        // without a half-pixel offset, does not sum to zero over a row, so a flat image has small
        // AC terms and its drawing a faint ramp (blurhash-python draws the same: up to 7 levels).
        for (image, bound) in [(try flat.thumbHash().image(), 6), (try flat.blurHash().image(width: 16, height: 16), 8)] {
            var worst = 0
            for y in 0..<image.pixelHeight {
                for x in 0..<image.pixelWidth {
                    let p = image.pixel(x: x, y: y)
                    worst = max(worst, abs(Int(p.r) - 32), abs(Int(p.g) - 160), abs(Int(p.b) - 96))
                }
            }
            #expect(worst <= bound, "\(image.pixel(x: 0, y: 0))")
        }
        let gradient = PlaceholderSample.generated("g", 300, 120, (1, 1)) { x, y in (UInt8(x * 255 / 299), UInt8(y * 2), 180, 255) }.image
        // Bounds: measured 9.6 (ThumbHash) and 5.7 (BlurHash 4 × 3) on this 0…255 ramp, whose
        // sharp ends few cosines cannot follow; a transposed or misplaced term gives several times more.
        for (name, drawn, bound) in [("ThumbHash", try gradient.thumbHash().image(), 11.0),
                                     ("BlurHash", try gradient.blurHash().image(width: 40, height: 16), 8.0)] {
            let source = Resampler.resize(gradient, width: drawn.pixelWidth, height: drawn.pixelHeight)
            let error = zip(source.pixels, drawn.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            let mean = Double(error) / Double(drawn.pixels.count)
            #expect(mean < bound, "\(name): mean difference \(mean)")
            print("placeholders: \(name) drawing of a ramp: mean difference \(mean)")
        }
        let thumb = try gradient.thumbHash()
        #expect(abs(thumb.approximateAspectRatio - 2.5) < 0.5)
    }

    /// A large image is scaled down before hashing: 9 × 9 components of a 2000 × 1500 image.
    @Test func largeImagesAreScaledDownFirst() throws {
        let large = PlaceholderSample.generated("large", 2000, 1500, (1, 1)) { x, y in (UInt8(x % 256), UInt8(y % 256), 7, 255) }.image
        let clock = ContinuousClock(), start = clock.now
        let hash = try large.blurHash(components: (9, 9))
        #expect(hash.components == (9, 9) && hash.string.count == 4 + 2 * 81)
        #expect(try large.thumbHash().approximateAspectRatio > 1)
        #expect(clock.now - start < .seconds(30))
    }

    /// The average weights colours by alpha: a transparent pixel's colour counts for nothing.
    @Test func averageColorWeightsByAlpha() throws {
        let halves = PlaceholderSample.generated("halves", 2, 1, (1, 1)) { x, _ in x == 0 ? (200, 40, 10, 255) : (0, 0, 255, 0) }.image
        #expect(try halves.averageColor() == RGBAColor(red: 200, green: 40, blue: 10, alpha: 128))
        let clear = PlaceholderSample.generated("clear", 3, 3, (1, 1)) { _, _ in (9, 9, 9, 0) }.image
        #expect(try clear.averageColor() == RGBAColor(red: 0, green: 0, blue: 0, alpha: 0))
        let broken = Image(format: .png, pixelWidth: 100, pixelHeight: 100, pixels: [], isOpaque: true)
        #expect(throws: PlaceholderError.self) { try broken.averageColor() }
    }
}
