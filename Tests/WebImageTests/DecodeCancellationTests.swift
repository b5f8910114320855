import Foundation
import Testing
import WebImage

/// Decoders look at `Task.isCancelled` inside one image, not only between frames: a render whose
/// deadline passed stops its decode within milliseconds (issue 25, "Deadlines stop the work").
extension HeavyTests {
    @Suite("Cancellation stops a still image's decode")
    struct DecodeCancellationTests {
        /// A PNG of `side` × `side` grey pixels (a few hundred KB: the attacker's cheap file).
        static func bigPNG(side: Int, interlaced: Bool = false) throws -> Data {
            let image = Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: [UInt8](repeating: 120, count: side * side * 4), isOpaque: true)
            let png = try PNGCoder().encode(image, as: .png, quality: 1)
            guard interlaced else { return png }
            // The same pixels, Adam7-interlaced, by the independent writer.
            return RawPNG(width: 1400, height: 1000, colorType: 2, interlaced: true) { x, y in [UInt8(x % 251), UInt8(y % 241), 7] }.encode()
        }

        @Test(arguments: [false, true])
        func aCancelledTaskDecodesNoPNG(interlaced: Bool) async throws {
            let png = try Self.bigPNG(side: 2048, interlaced: interlaced)
            let task = Task.detached { () -> ImageDecodingError? in
                withUnsafeCurrentTask { $0?.cancel() }
                do throws(ImageDecodingError) {
                    _ = try PNGCoder().decode(png, options: .default)
                    return nil
                } catch {
                    return error
                }
            }
            #expect(await task.value == .cancelled)
            // Not cancelled, the same file decodes whole.
            let image = try PNGCoder().decode(png, options: .default)
            #expect(image.pixelWidth == (interlaced ? 1400 : 2048))
            if interlaced {
                // Row-by-row decoding puts each pass's pixels in place (checked against what was written).
                for (x, y) in [(0, 0), (1399, 999), (301, 177), (5, 998), (1001, 3)] {
                    let at = (y * 1400 + x) * 4
                    #expect(Array(image.pixels[at..<at + 4]) == [UInt8(x % 251), UInt8(y % 241), 7, 255], "(\(x), \(y))")
                }
            }
        }

        @Test func aCancelStopsA25MegapixelDecodeWithinMilliseconds() async throws {
            let png = try Self.bigPNG(side: 5000)
            let executor = ImageWorkExecutor(threads: 1, name: "test-decode-cancel")
            defer { executor.shutdown() }
            let job = JobThread()
            let work = Task(executorPreference: executor) { () -> (ImageDecodingError?, Duration) in
                let cpu = job.started()
                do throws(ImageDecodingError) {
                    _ = try PNGCoder().decode(png, options: ImageDecodingOptions(maxPixelCount: 100_000_000))
                    return (nil, cpu.used)
                } catch {
                    return (error, cpu.used)
                }
            }
            let spentAtCancel = await job.cancel(work, afterUsing: .milliseconds(5))
            let (error, spentAtEnd) = await work.value
            #expect(error == .cancelled, "the decode ran to its end")
            // CPU time, not wall time: on a loaded machine the decode's thread may wait for a core
            // longer than the bound, but what it spends after the cancel is the decoder's doing.
            #expect(spentAtEnd - spentAtCancel < .milliseconds(100), "used \(spentAtEnd - spentAtCancel) of CPU after the cancel")
        }
    }
}
