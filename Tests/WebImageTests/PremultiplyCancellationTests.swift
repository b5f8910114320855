import Testing
@testable import WebImage

/// The decoders' last step over a whole still (premultiplying straight alpha) is cut into bands
/// with a look at `Task.isCancelled` between them, so a cancel that arrives after the rows are
/// decoded still stops the work within one band (issue 25, "Deadlines stop the work").
extension HeavyTests {
    @Suite("Premultiplying a decoded image stops on a cancel")
    struct PremultiplyCancellationTests {
        /// In bands, the same bytes and the same opacity as in one pass: a size that is not a
        /// whole number of bands, translucent pixels only in the last band, then none.
        @Test func bandsGiveTheOnePassResult() throws {
            let count = 3 * PixelOperations.band + 4 * 37
            var pixels = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }
            for i in stride(from: 3, to: 3 * PixelOperations.band, by: 4) { pixels[i] = 255 }
            var onePass = pixels, inBands = pixels
            let opaque = PixelOperations.premultiply(&onePass)
            #expect(try PixelOperations.premultiplyStoppable(&inBands) == opaque)
            #expect(!opaque)
            #expect(inBands == onePass)
            var allOpaque = [UInt8](repeating: 255, count: 2 * PixelOperations.band + 8)
            #expect(try PixelOperations.premultiplyStoppable(&allOpaque))
        }

        /// 49 MP of alpha 128 (every band does the full work): cancelled once it has run 150 ms
        /// of CPU, it throws `.cancelled` within 100 ms of CPU (one band is about 30 ms in a debug
        /// build; the whole image would take many seconds).
        @Test func aCancelStopsPremultiplyingWithinABand() async throws {
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(150)) {
                () throws(ImageDecodingError) in
                var pixels = [UInt8](repeating: 128, count: 7000 * 7000 * 4)
                _ = try PixelOperations.premultiplyStoppable(&pixels)
            }
            #expect(error == .cancelled, "premultiplying ran to its end")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        /// A task cancelled before the call leaves the pixels as they were.
        @Test func anAlreadyCancelledTaskDoesNoWork() async throws {
            let result = await Task.detached { () -> (Bool, [UInt8]) in
                withUnsafeCurrentTask { $0?.cancel() }
                var pixels = [UInt8](repeating: 100, count: 64)
                let threw = (try? PixelOperations.premultiplyStoppable(&pixels)) == nil
                return (threw, pixels)
            }.value
            #expect(result.0)
            #expect(result.1 == [UInt8](repeating: 100, count: 64))
        }
    }
}
