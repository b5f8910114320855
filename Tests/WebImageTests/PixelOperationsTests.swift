import Testing
@testable import WebImage

@Suite("Premultiplication")
struct PixelOperationsTests {
    /// Exact rounding of c · a / 255, the reference for every coder's premultiplication.
    static func reference(_ c: Int, _ a: Int) -> UInt8 { UInt8((c * a + 127) / 255) }

    @Test func everyColourAndAlphaRoundsExactly() {
        // 65536 pixels: every (colour, alpha) pair, in all three colour channels, plus a short tail.
        var pixels: [UInt8] = []
        for a in 0..<256 {
            for c in 0..<256 { pixels += [UInt8(c), UInt8(255 - c), UInt8(c / 2), UInt8(a)] }
        }
        pixels += [200, 100, 50, 128, 10, 20, 30, 255]
        var premultiplied = pixels
        #expect(!PixelOperations.premultiply(&premultiplied))
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let a = Int(pixels[i + 3])
            let expected = (0..<3).map { Self.reference(Int(pixels[i + $0]), a) } + [pixels[i + 3]]
            #expect(Array(premultiplied[i..<i + 4]) == expected, "pixel \(i / 4)")
            if Array(premultiplied[i..<i + 4]) != expected { break }
        }
    }

    @Test func opaquePixelsAreUntouchedAndReported() {
        var pixels = [UInt8](repeating: 255, count: 4 * 7)
        for i in stride(from: 0, to: pixels.count, by: 4) { pixels[i] = UInt8(i) }
        let original = pixels
        #expect(PixelOperations.premultiply(&pixels))
        #expect(pixels == original)
        pixels[6 * 4 + 3] = 254  // in the scalar tail
        #expect(!PixelOperations.premultiply(&pixels))
    }
}
