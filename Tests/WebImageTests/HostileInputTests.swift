import Foundation
import Testing
@testable import WebImage
import WebImageOrigin

extension HeavyTests {
/// Small inputs that once asked for gigabytes or minutes of CPU: the limit counts what is
/// allocated, and work is bounded by the pixels, not by a parameter.
@Suite("Hostile input: allocation and work bounded by pixels")
struct HostileInputTests {
    // MARK: - Pages drawn on a larger canvas count at the canvas's size

    @Test func tiffPagesCountAtTheCanvasSizeTheyAreDrawnOn() throws {
        // 1000 × 1000, then two 1 × 1 pages: each page is drawn on a 1 MP canvas, so the decode
        // holds 3 MP, not the 1 MP + 2 pixels the pages' own areas add up to.
        let file = TIFFBomb.pages(side: 1000, pages: 3)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 1000, height: 1000, frames: 3, limit: 2_500_000)) {
            try TIFFCoder().decode(file, options: ImageDecodingOptions(maxPixelCount: 2_500_000))
        }
        let decoded = try TIFFCoder().decode(file, options: ImageDecodingOptions(maxPixelCount: 3_000_000))
        #expect(decoded.frames.count == 3 && decoded.pixelWidth == 1000)
        // Frames beyond `maxFrameCount` are dropped, and not counted.
        var two = ImageDecodingOptions(maxPixelCount: 2_500_000)
        two.maxFrameCount = 2
        #expect(try TIFFCoder().decode(file, options: two).frames.count == 2)
    }

    @Test func aSmallTIFFOfManyPagesIsRefusedBeforeAnythingLargeIsAllocated() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
        let file = TIFFBomb.pages()  // 7000 × 7000, then 998 pages of 1 × 1
        #expect(file.count < 300_000)
        let path = temporaryDirectory().appendingPathComponent("pages.tif")
        try file.write(to: path)
        let run = try await BombMemoryTests.peakMemory(["info", path.path, "--decode"])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("over the limit"), "\(run.output)")
        #expect(run.bytes < 256 << 20, "peak \(run.bytes >> 20) MB")
    }

    // MARK: - An animation's result counts all its frames

    @Test func anEnlargedAnimationIsRefusedBeforeAnyFrameIsProcessed() async throws {
        // 4 KB: 20 one-pixel frames on a 100 × 100 screen; 7000 × 7000 × 20 frames is 980 MP.
        let gif = GIFBomb.manyFrames(width: 100, height: 100, frames: 20)
        let animation = try ImageCoderRegistry.default.decode(gif)
        #expect(throws: ImageProcessingError.tooLarge(width: 7000, height: 7000)) {
            try animation.processed(by: [.resize(width: 7000, height: 7000, mode: .exact, upscale: true)], animated: true)
        }
        // Within the limit it is processed, enlarged too (off the cooperative pool; 400 × 400: at
        // 1000 × 1000 this one line took over a minute of a debug build's test run).
        let (frames, width, height) = try await offPool {
            let enlarged = try animation.processed(by: [.resize(width: 400, height: 400, mode: .exact, upscale: true)], animated: true)
            return (enlarged.frames.count, enlarged.pixelWidth, enlarged.pixelHeight)
        }
        #expect(frames == 20 && width == 400 && height == 400)
        // Through `fetch`: refused with the reason before its first frame is enlarged (the
        // pipeline decodes that frame alone for the stream; enlarged, it was 196 MB and most of
        // this test's minute in a debug build).
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
        let output = temporaryDirectory()
        try await withOrigin(files: ["frames.gif": gif]) { origin in
            let run = try await BombMemoryTests.peakMemory([
                "fetch", "--no-cache", "--output", output.path, "--process", "resize:7000x7000:exact:upscale", "--format", "gif",
                origin.imageURL("frames.gif").absoluteString,
            ])
            #expect(run.status == 3, "\(run.output)")
            #expect(run.output.contains("over the limit"), "\(run.output)")
            #expect(run.bytes < 128 << 20, "peak \(run.bytes >> 20) MB")
        }
    }

    // MARK: - Intermediates of extreme aspect ratios

    @Test(arguments: [10_000, 100_000])
    func aTallStripShrunkToOneRowNeedsTwoRowsOfMemory(height: Int) async throws {
        // Resampling 1 × 100,000 to 8192 × 1 once sized a ring of 100,000 rows × 8192 (13 GB).
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
        let strip = try await HostileImages.strip(width: 1, height: height)
        #expect(strip.count < 2_000)
        let path = temporaryDirectory().appendingPathComponent("strip.png")
        try strip.write(to: path)
        let output = temporaryDirectory()
        try await withOrigin(files: ["strip.png": strip]) { origin in
            let run = try await BombMemoryTests.peakMemory([
                "fetch", "--no-cache", "--output", output.path, "--process", "resize:8192x1:exact:upscale", "--format", "png",
                origin.imageURL("strip.png").absoluteString,
            ])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.bytes < 256 << 20, "peak \(run.bytes >> 20) MB")
        }
        let written = try FileManager.default.contentsOfDirectory(at: output, includingPropertiesForKeys: nil).filter { $0.pathExtension == "png" }
        let image = try ImageCoderRegistry.default.decode(Data(contentsOf: try #require(written.first)))
        #expect(image.pixelWidth == 8192 && image.pixelHeight == 1)
    }

    @Test func theTwoRowRingGivesTheSamePixelsAsSummingEveryRow() async {
        let mismatches = await offPool { Self.resamplerMismatches() }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// Where the resampler differs by more than 1 from the weighted sums done the long way.
    static func resamplerMismatches() -> [String] {
        var mismatches: [String] = []
        // A reduction whose output rows share their boundary rows, and an enlargement whose
        // rows share both (and, at 40 × 1 and 30 × 2, the columns-first path a narrow source
        // made wide and flat takes): checked against the weighted sums done the long way.
        let width = 7, height = 23
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index * 37 + index / 5) }
        for (toWidth, toHeight) in [(3, 5), (7, 4), (5, 61), (2, 1), (40, 1), (30, 2)] {
            let fast = Resampler.resample(pixels, width: width, height: height, bytesPerRow: width * 4, toWidth: toWidth, toHeight: toHeight)
            let columns = Resampler.Filter(source: width, target: toWidth), rows = Resampler.Filter(source: height, target: toHeight)
            for y in 0..<toHeight {
                let r = rows.taps(y)
                for x in 0..<toWidth {
                    let c = columns.taps(x)
                    for channel in 0..<4 {
                        var sum: Float = 0
                        for k in 0..<r.count {
                            var line: Float = 0
                            for j in 0..<c.count {
                                line += Float(pixels[((r.first + k) * width + c.first + j) * 4 + channel]) * columns.weights[c.weightOffset + j]
                            }
                            sum += line * rows.weights[r.weightOffset + k]
                        }
                        let expected = min(max(sum, 0), 255).rounded()
                        if abs(Float(fast[(y * toWidth + x) * 4 + channel]) - expected) > 1 { mismatches.append("\(toWidth)x\(toHeight) at \(x),\(y)") }
                    }
                }
            }
        }
        return mismatches
    }

    // MARK: - Work bounded by the pixels, not by a parameter

    @Test func aWideBlurCostsWhatANarrowOneCostsOnATinyImage() async throws {
        // 1 × 200,000: the box blur's set-up was linear in the radius for every row (a radius of
        // 10,000 meant 20,001 additions per row and pass); now it is linear in the row.
        let pixels = [UInt8](repeating: 200, count: 200_000 * 4)
        let strip = Image(format: .png, pixelWidth: 1, pixelHeight: 200_000, pixels: pixels, isOpaque: true)
        let (narrow, wide, flat) = try await offPool { () throws -> (Duration, Duration, Bool) in
            // This thread's CPU time: a loaded machine stretches the wall time of either blur.
            let cpu = ThreadCPUClock.current()
            let start = cpu.used
            _ = try strip.processed(by: [.gaussianBlur(radius: 1)])
            let narrowEnd = cpu.used
            let blurred = try strip.processed(by: [.gaussianBlur(radius: 10_000)])
            return (narrowEnd - start, cpu.used - narrowEnd, blurred.pixels.allSatisfy { $0 == 200 })
        }
        #expect(wide < narrow * 4 + .seconds(1), "blur:10000 took \(wide), blur:1 \(narrow)")
        // A flat image stays flat whatever the radius (the edge copies are the same colour).
        #expect(flat)
    }

    @Test(arguments: [0.4, 3.7, 40.0, 10_000.0])
    func theBoxBlurWindowSummedOnceEqualsTheWindowWalkedPixelByPixel(radius: Float) async {
        // The window's start is now summed without walking the radius; the reference walks it
        // for every pixel, with the edges repeated, as the box blur is defined.
        let width = 5, height = 3
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index * 29 + 7) }
        let box = BoxBlur(radius: radius), source = pixels
        let fast = await offPool { () -> [UInt8] in
            var fast = source
            box.blur(&fast, width: width, height: height)
            return fast
        }
        func pass(_ line: [UInt32]) -> [UInt32] {
            let n = line.count, r = box.whole
            func at(_ i: Int) -> UInt32 { line[min(max(i, 0), n - 1)] }
            return (0..<n).map { x in
                var sum: UInt32 = 0
                for k in -r...r { sum &+= at(x + k) }
                let edges = at(x - r - 1) &+ at(x + r + 1)
                return (sum &* box.fullWeight &+ edges &* box.edgeWeight &+ (1 << 23)) >> 24
            }
        }
        var reference = pixels.map(UInt32.init)
        for channel in 0..<4 {
            for y in 0..<height {
                var line = (0..<width).map { reference[(y * width + $0) * 4 + channel] }
                for _ in 0..<BoxBlur.passes { line = pass(line) }
                for x in 0..<width { reference[(y * width + x) * 4 + channel] = line[x] }
            }
            for x in 0..<width {
                var column = (0..<height).map { reference[($0 * width + x) * 4 + channel] }
                for _ in 0..<BoxBlur.passes { column = pass(column) }
                for y in 0..<height { reference[(y * width + x) * 4 + channel] = column[y] }
            }
        }
        #expect(fast == reference.map { UInt8(truncatingIfNeeded: $0) }, "radius \(radius)")
    }

    // MARK: - Cancellation stops the work

    @Test func cancellingATaskStopsItsProcessingWithinAFewRows() async throws {
        let side = 1500
        let image = Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: [UInt8](repeating: 90, count: side * side * 4), isOpaque: true)
        let steps: [any ImageProcessing] = Array(repeating: ImageProcessors.GaussianBlur(radius: 30), count: 40)
        let (result, spent) = await HeavyTests.ProcessorCancellationTests.processCancelled(image, by: steps, afterUsing: .milliseconds(300))
        #expect(throws: ImageProcessingError.cancelled) { try result.get() }
        // 40 blurs of 2.25 MP take tens of seconds; a cancelled one ends at the next rows. CPU time
        // after the cancel, which a loaded machine does not stretch as it stretches wall time.
        #expect(spent < .milliseconds(500), "used \(spent) of CPU after the cancel")
    }

    @Test(arguments: [ImageFormat.gif, .webp, .apng])
    func cancellingATaskStopsAnAnimationsEncodingBetweenFrames(format: ImageFormat) async throws {
        var animation = Image(format: .gif, pixelWidth: 64, pixelHeight: 64, pixels: [UInt8](repeating: 255, count: 64 * 64 * 4), isOpaque: true)
        animation.frames = (0..<50).map { index in
            ImageFrame(pixels: [UInt8](repeating: UInt8(index * 5), count: 64 * 64 * 4).enumerated().map { $0.offset % 4 == 3 ? 255 : $0.element },
                       duration: .milliseconds(100))
        }
        animation.frameCount = 50
        let frames = animation
        let task = Task.detached { () -> ImageEncodingError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(ImageEncodingError) {
                _ = try ImageCoderRegistry.default.encode(frames, as: format, quality: 0.8)
                return nil
            } catch {
                return error
            }
        }
        #expect(await task.value == .cancelled, "\(format)")
        // Not cancelled, the same animation encodes.
        #expect(try ImageCoderRegistry.default.decode(try ImageCoderRegistry.default.encode(frames, as: format, quality: 0.8)).frames.count == 50)
    }

    @Test func cancellingATaskStopsAnAnimationBetweenFrames() async throws {
        let gif = GIFBomb.manyFrames(width: 300, height: 300, frames: 400)
        let task = Task.detached { () -> ImageDecodingError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(ImageDecodingError) {
                _ = try ImageCoderRegistry.default.decode(gif)
                return nil
            } catch {
                return error
            }
        }
        #expect(await task.value == .cancelled)
    }
}
}
