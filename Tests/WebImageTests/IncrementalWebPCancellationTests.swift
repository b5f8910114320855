import Testing
@testable import WebImage

/// A download's incremental WebP decoder gives libwebp each network chunk a piece at a time: one
/// chunk of 90 KB holds a whole 49 MP solid-colour WebP, which was one call of libwebp's decoder
/// (issue 25, "Deadlines stop the work").
extension HeavyTests {
    @Suite("A cancelled download stops its incremental WebP decode")
    struct IncrementalWebPCancellationTests {
        /// The whole solid file appended as one chunk in a task cancelled after 5 ms of CPU: the
        /// append returns within 100 ms of CPU, and the bottom rows were never decoded.
        @Test(arguments: ["lossy", "lossless"])
        func aCancelStopsAppendingAWholeChunk(kind: String) async throws {
            let webp = try #require(await SolidImageCancellationTests.solidWebPs.value[kind])
            let incremental = WebPIncrementalDecoder(options: SolidImageCancellationTests.options)
            let (_, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(5)) {
                incremental.append(webp)
            }
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
            if let partial = incremental.partialImage() {
                #expect(partial.pixelWidth == 16383 && partial.pixelHeight == 3000)
                #expect(Array(partial.pixels.suffix(4)) == [0, 0, 0, 0], "the last row was decoded")
                #expect(!partial.isOpaque)
            }
        }

        /// Not cancelled, the same single chunk decodes every row: the one-call image.
        @Test func anUncancelledWholeChunkDecodesEveryRow() async throws {
            let webp = try #require(await SolidImageCancellationTests.solidWebPs.value["lossless"])
            let incremental = WebPIncrementalDecoder(options: SolidImageCancellationTests.options)
            incremental.append(webp)
            let partial = try #require(incremental.partialImage())
            #expect(partial.isOpaque)
            #expect(partial.pixels == (try WebPCoder().decode(webp, options: SolidImageCancellationTests.options)).pixels)
        }
    }
}
