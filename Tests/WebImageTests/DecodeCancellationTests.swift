import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Decoders look at `Task.isCancelled` inside one image, not only between frames: a render whose
/// deadline passed stops its decode within milliseconds (issue 25, "Deadlines stop the work").
/// PNG and JPEG stills, baseline and progressive, WebP and JPEG XL.
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
            #expect(await Self.errorInCancelledTask { () throws(ImageDecodingError) in _ = try PNGCoder().decode(png, options: .default) } == .cancelled)
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
            let (error, spent) = await Self.cancelSoonAfterStart { () throws(ImageDecodingError) in
                _ = try PNGCoder().decode(png, options: ImageDecodingOptions(maxPixelCount: 100_000_000))
            }
            #expect(error == .cancelled, "the decode ran to its end")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        // MARK: JPEG

        /// A `side` × `side` JPEG of a smooth gradient (a few hundred KB), baseline or progressive.
        static func bigJPEG(side: Int, progressive: Bool) throws -> Data {
            var pixels = [UInt8](repeating: 255, count: side * side * 4)
            pixels.withUnsafeMutableBufferPointer { p in
                for y in 0..<side {
                    let row = y * side * 4
                    for x in stride(from: 0, to: side, by: 1) {
                        p[row + 4 * x] = UInt8(truncatingIfNeeded: x >> 4)
                        p[row + 4 * x + 1] = UInt8(truncatingIfNeeded: y >> 4)
                    }
                }
            }
            let image = Image(format: .jpeg, pixelWidth: side, pixelHeight: side, pixels: pixels, isOpaque: true)
            return try JPEGCoder(progressive: progressive).encode(image, as: .jpeg, quality: 0.9)
        }

        @Test(arguments: [false, true])
        func aCancelledTaskDecodesNoJPEG(progressive: Bool) async throws {
            let jpeg = try Self.bigJPEG(side: 2048, progressive: progressive)
            #expect(await Self.errorInCancelledTask { () throws(ImageDecodingError) in _ = try JPEGCoder().decode(jpeg, options: .default) } == .cancelled)
            // Not cancelled, the same file decodes whole, the pixels where they were written.
            let image = try JPEGCoder().decode(jpeg, options: .default)
            #expect(image.pixelWidth == 2048 && image.pixelHeight == 2048)
            for (x, y) in [(0, 0), (2047, 2047), (1000, 30), (8, 2000)] {
                let at = (y * 2048 + x) * 4
                let expected = [Int(UInt8(truncatingIfNeeded: x >> 4)), Int(UInt8(truncatingIfNeeded: y >> 4)), 255]
                let found = image.pixels[at..<at + 3].map(Int.init)
                #expect(zip(found, expected).allSatisfy { abs($0 - $1) <= 3 }, "(\(x), \(y)): \(found)")
            }
        }

        @Test func aCancelledTaskDecodesNoWebP() async throws {
            let webp = try WebPCoder().encode(SampleImages.pattern(width: 900, height: 700, seed: 4), as: .webp, quality: 0.9)
            #expect(await Self.errorInCancelledTask { () throws(ImageDecodingError) in _ = try WebPCoder().decode(webp, options: .default) } == .cancelled)
            #expect(try WebPCoder().decode(webp, options: .default).pixelWidth == 900)
        }

        /// A 25 MP JPEG decode stops within 100 ms of a cancel that comes a few ms into it: for a
        /// progressive file, while its scans are read (before any row is out) or its rows made.
        @Test(arguments: [false, true])
        func aCancelStopsA25MegapixelJPEGDecodeWithinMilliseconds(progressive: Bool) async throws {
            let jpeg = try Self.bigJPEG(side: 5000, progressive: progressive)
            let (error, spent) = await Self.cancelSoonAfterStart { () throws(ImageDecodingError) in
                _ = try JPEGCoder().decode(jpeg, options: ImageDecodingOptions(maxPixelCount: 100_000_000))
            }
            #expect(error == .cancelled, "the decode ran to its end")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        // MARK: JPEG XL

        @Test func aCancelledTaskDecodesNoJXL() async throws {
            let jxl = try await LargeJXL.photo.value
            let options = ImageDecodingOptions(maxPixelCount: 100_000_000)
            #expect(await Self.errorInCancelledTask { () throws(ImageDecodingError) in _ = try JXLCoder().decode(jxl, options: options) } == .cancelled)
            #expect(try JXLCoder().decode(jxl, options: options).pixelWidth == LargeJXL.side)
        }

        /// A 9 MP JPEG XL decode (0.9 MB, about 15 pieces of 64 KB) stops within 100 ms of a
        /// cancel that comes 5 ms into it: libjxl finishes the piece it has, then gets no more.
        @Test func aCancelStopsAJPEGXLDecodeWithinMilliseconds() async throws {
            let jxl = try await LargeJXL.photo.value
            let (error, spent) = await Self.cancelSoonAfterStart { () throws(ImageDecodingError) in
                _ = try JXLCoder().decode(jxl, options: ImageDecodingOptions(maxPixelCount: 100_000_000))
            }
            #expect(error == .cancelled, "the decode ran to its end")
            #expect(spent < .milliseconds(100), "used \(spent) of CPU after the cancel")
        }

        /// What `decode` throws in a task cancelled before it starts (nil if nothing).
        static func errorInCancelledTask(_ decode: @escaping @Sendable () throws(ImageDecodingError) -> Void) async -> ImageDecodingError? {
            await Task.detached { () -> ImageDecodingError? in
                withUnsafeCurrentTask { $0?.cancel() }
                do throws(ImageDecodingError) {
                    try decode()
                    return nil
                } catch {
                    return error
                }
            }.value
        }

        /// Runs `decode` on a thread of its own, cancels it once it has used `cpu` of CPU, and
        /// returns what it threw and the CPU time its thread used after the cancel. The cancel
        /// comes from a thread of its own (the tests' cooperative threads can be late by more than
        /// a whole decode when the suite runs); CPU time, not wall time, because on a loaded
        /// machine the decode's thread may wait for a core longer than the bound, while what it
        /// spends after the cancel is the decoder's doing.
        static func cancelSoonAfterStart(
            after cpu: Duration = .milliseconds(5), _ decode: @escaping @Sendable () throws(ImageDecodingError) -> Void
        ) async -> (ImageDecodingError?, Duration) {
            let executor = ImageWorkExecutor(threads: 1, name: "test-decode-cancel")
            defer { executor.shutdown() }
            let job = JobThread()
            let work = Task(executorPreference: executor) { () -> (ImageDecodingError?, Duration) in
                let cpu = job.started()
                do throws(ImageDecodingError) {
                    try decode()
                    return (nil, cpu.used)
                } catch {
                    return (error, cpu.used)
                }
            }
            let spentAtCancel = await job.cancel(work, afterUsing: cpu)
            let (error, spentAtEnd) = await work.value
            return (error, spentAtEnd - spentAtCancel)
        }
    }
}
