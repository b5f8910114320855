import Foundation
import Testing
import WebImage

/// Every processor against Pillow's version of the same operation, on the committed inputs and
/// references written by `scripts/fixtures/make-processing-references.py` (64 × 48: `opaque.png` and
/// `rgba.png`, which has alpha from 255 down to 90, a transparent hole and a half-transparent disc).
///
/// The measure is the mean absolute error per channel (R, G, B and A separately; the largest of
/// the four must be within the bound) over premultiplied values: both images are decoded by
/// WebImage's PNG coder, which premultiplies the references' straight alpha with the same exact
/// rounding. Comparing premultiplied values weighs each colour error by the pixel's coverage —
/// what is seen when the image is composited — and gives no weight to the meaningless colour of
/// fully transparent pixels; alpha itself is compared as it is.
@Suite("Processing matches Pillow", .cpuBound)
struct ProcessingReferenceTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let processor: any ImageProcessing
        /// Largest mean absolute error per channel allowed, in 8-bit levels.
        let bound: Double
        var testDescription: String { name }
    }

    static let red = RGBAColor(red: 200, green: 20, blue: 20)

    static let cases: [Case] = [
        // Resampling, each axis on its own: the references shrink by exact area averaging (in
        // Pillow: NEAREST enlargement, then `reduce`) and grow with Pillow's BILINEAR. Pillow
        // rounds each pass to 8 bits, we round once, and the translucent input's references
        // go through a premultiplication round trip: measured ≤ 0.35.
        Case(name: "resize-fit-40x40", processor: .resize(width: 40, height: 40), bound: 0.5),
        Case(name: "resize-fill-32x32", processor: .resize(width: 32, height: 32, mode: .fill), bound: 0.5),
        Case(name: "resize-exact-100x30", processor: .resize(width: 100, height: 30, mode: .exact, upscale: true), bound: 0.5),
        Case(name: "resize-fit-upscale-96x96", processor: .resize(width: 96, height: 96, upscale: true), bound: 0.5),
        // Moving pixels without changing them: exact.
        Case(name: "crop-10-5-30-20", processor: .crop(x: 10, y: 5, width: 30, height: 20), bound: 0),
        Case(name: "crop-square", processor: .cropToSquare(), bound: 0),
        Case(name: "flip-h", processor: .flip(.horizontal), bound: 0),
        Case(name: "flip-v", processor: .flip(.vertical), bound: 0),
        Case(name: "rotate-90", processor: .rotate(degrees: 90), bound: 0),
        Case(name: "rotate-180", processor: .rotate(degrees: 180), bound: 0),
        Case(name: "rotate-270", processor: .rotate(degrees: -90), bound: 0),
        // Arbitrary angles: the same size and bilinear interpolation inside the picture, but
        // Pillow's edge is hard (a pixel is picture or background) and ours is anti-aliased
        // (neighbours outside the picture count as background): the ~250 edge pixels differ by
        // up to half the contrast with the background. Measured 1.0–2.7.
        Case(name: "rotate-30-white", processor: .rotate(degrees: 30, background: .white), bound: 4),
        Case(name: "rotate-200-clear", processor: .rotate(degrees: 200), bound: 4),
        // Masks: ours is a one-pixel ramp across the exact edge, Pillow's reference an 8 × 8
        // supersampled drawing of the arc (a polygon); edge pixels differ by up to 25 levels,
        // on average ≤ 0.45.
        Case(name: "round-12", processor: .roundedCorners(radius: 12), bound: 1),
        Case(name: "round-10-border-3", processor: .roundedCorners(radius: 10, border: .init(width: 3, color: red)), bound: 1),
        Case(name: "circle", processor: .circle(), bound: 1),
        Case(name: "circle-border-4", processor: .circle(border: .init(width: 4, color: RGBAColor(red: 255, green: 255, blue: 255, alpha: 160))), bound: 1),
        // The same three-box approximation and fixed-point arithmetic as Pillow: equal on the
        // opaque input; the translucent reference's premultiplication round trip: ≤ 0.19.
        Case(name: "blur-1", processor: .gaussianBlur(radius: 1), bound: 0.5),
        Case(name: "blur-2.5", processor: .gaussianBlur(radius: 2.5), bound: 0.5),
        Case(name: "blur-6", processor: .gaussianBlur(radius: 6), bound: 0.5),
        // Per-pixel arithmetic. Pillow's `blend` truncates where we round: most pixels one level
        // apart (measured 0.96). Grayscale uses Pillow's own fixed point: equal on the opaque
        // input, premultiplication rounding on the translucent one (0.21).
        Case(name: "tint-ff000080", processor: .tint(RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)), bound: 1.5),
        Case(name: "grayscale", processor: .grayscale(), bound: 0.5),
    ]

    @Test(arguments: ["opaque", "rgba"], cases)
    func matchesPillow(input: String, testCase: Case) throws {
        let source = try Self.load(input)
        let reference = try Self.load("\(input)-\(testCase.name)")
        let result = try source.processed(by: [testCase.processor])
        #expect(result.pixelWidth == reference.pixelWidth && result.pixelHeight == reference.pixelHeight,
                "size \(result.pixelWidth) × \(result.pixelHeight), Pillow \(reference.pixelWidth) × \(reference.pixelHeight)")
        guard result.pixelWidth == reference.pixelWidth, result.pixelHeight == reference.pixelHeight else { return }
        let errors = Self.meanAbsoluteErrors(result, reference)
        let worst = errors.max() ?? 0
        print("processing-mae \(input)-\(testCase.name) \(errors.map { String(format: "%.3f", $0) }.joined(separator: " ")) bound \(testCase.bound)")
        #expect(worst <= testCase.bound, "\(input)-\(testCase.name): mean absolute error per channel \(errors), bound \(testCase.bound)")
        #expect(result.bytesPerRow == result.pixelWidth * 4)
    }

    // MARK: - Helpers

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/processing")

    static func load(_ name: String) throws -> Image {
        try PNGCoder().decode(try Data(contentsOf: directory.appendingPathComponent("\(name).png")), options: .default)
    }

    /// Mean absolute difference of R, G, B and A over premultiplied pixels of two same-size images.
    static func meanAbsoluteErrors(_ a: Image, _ b: Image) -> [Double] {
        var sums = [Double](repeating: 0, count: 4)
        for y in 0..<a.pixelHeight {
            for x in 0..<a.pixelWidth {
                let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
                sums[0] += Double(abs(Int(p.r) - Int(q.r)))
                sums[1] += Double(abs(Int(p.g) - Int(q.g)))
                sums[2] += Double(abs(Int(p.b) - Int(q.b)))
                sums[3] += Double(abs(Int(p.a) - Int(q.a)))
            }
        }
        return sums.map { $0 / Double(a.pixelWidth * a.pixelHeight) }
    }
}
