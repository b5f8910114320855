import Foundation
import Testing
@testable import WebImage

/// BMP pixel work is bounded by the pixels and stops at a cancel (red team, stop 49): a 2 MB
/// RLE8 file of one pixel whose runs ran past the row's end took 27 s of CPU to decode, and
/// neither it nor a plain 36 MP bitmap looked at the cancel (a `serve` render went on past its 504).
extension HeavyTests {
    @Suite("BMP: work bounded by the pixels, stopped by a cancel")
    struct BMPCostTests {
        /// A 1 × 1 RLE8 bitmap: a million runs of 255 pixels, then the end-of-bitmap marker.
        static let runsPastTheRow = BMPICOTests.bmp(
            width: 1, height: 1, bits: 8, compression: 1, pixels: Array(repeating: [0xFF, 0x00], count: 1_000_000).flatMap { $0 } + [0, 1])

        @Test func runsPastTheRowCostNothing() throws {
            let clock = ThreadCPUClock.current()
            let start = clock.used
            let image = try BMPCoder().decode(Self.runsPastTheRow, options: .default)
            let spent = clock.used - start
            #expect(image.pixelWidth == 1 && image.pixelHeight == 1)
            // Before: 255 steps a run, 27 s in a debug build. Now the 2 MB of codes are read once.
            #expect(spent < .seconds(1), "decoding took \(spent) of CPU")
        }

        /// 6000 × 6000 at 1 bit (4.5 MB), and 4000 × 4000 in RLE8 runs of two pixels (16 MB):
        /// cancelled 5 ms in, each decode throws `.cancelled` within 100 ms of CPU.
        @Test(arguments: ["plain", "rle8"])
        func aCancelStopsTheDecode(_ kind: String) async throws {
            let file = kind == "plain"
                ? BMPICOTests.bmp(width: 6000, height: 6000, bits: 1, pixels: [UInt8](repeating: 0x5A, count: 752 * 6000 + 8))  // + a 2-colour palette's 8 bytes
                : BMPICOTests.bmp(
                    width: 4000, height: 4000, bits: 8, compression: 1,
                    pixels: Array(repeating: Array(repeating: [2, 7], count: 2000).flatMap { $0 } + [0, 0], count: 4000).flatMap { $0 } + [0, 1])
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart {
                () throws(ImageDecodingError) in _ = try BMPCoder().decode(file, options: .default)
            }
            #expect(error == .cancelled, "\(kind): the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "\(kind) used \(spent) of CPU after the cancel")
            // Not cancelled, the same file decodes whole.
            #expect(try BMPCoder().decode(file, options: .default).pixelHeight == (kind == "plain" ? 6000 : 4000))
        }
    }
}
