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
            let clock = ContinuousClock()
            let started = Flag()
            let work = Task(executorPreference: executor) { () -> (ImageDecodingError?, ContinuousClock.Instant) in
                started.set()
                do throws(ImageDecodingError) {
                    _ = try PNGCoder().decode(png, options: ImageDecodingOptions(maxPixelCount: 100_000_000))
                    return (nil, ContinuousClock.now)
                } catch {
                    return (error, ContinuousClock.now)
                }
            }
            // The cancel comes from a thread of its own as soon as the decode starts (the tests'
            // cooperative threads can be late by more than a whole decode when the suite runs).
            let cancelledAt = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    while !started.isSet { usleep(200) }
                    usleep(5_000)
                    let now = clock.now
                    work.cancel()
                    continuation.resume(returning: now)
                }
            }
            let (error, ended) = await work.value
            #expect(error == .cancelled, "the decode ran to its end")
            #expect(ended - cancelledAt < TestTime.scaled(.milliseconds(100)), "stopped \(ended - cancelledAt) after the cancel")
        }
    }
}
