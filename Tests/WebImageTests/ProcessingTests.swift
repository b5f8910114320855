import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Processors: identifiers, composition, animation, errors")
struct ProcessingTests {
    static let photo = SampleImages.pattern(width: 40, height: 30, seed: 3, alpha: true)

    @Test func identifiersNameEveryParameter() {
        #expect(ImageProcessors.Resize(width: 256, height: 256, mode: .fill).identifier == "resize(256x256,fill,upscale:false)")
        #expect(ImageProcessors.Crop(.rect(x: 0, y: 0, width: 100, height: 100)).identifier == "crop(0,0,100,100)")
        #expect(ImageProcessors.Rotate(degrees: 30, background: .white).identifier == "rotate(30,background:ffffffff)")
        #expect(ImageProcessors.Rotate(degrees: -90).identifier == "rotate(270)")
        #expect(ImageProcessors.RoundedCorners(radius: 12, border: .init(width: 2, color: .black)).identifier == "round(12,border:2,000000ff)")
        #expect(ImageProcessors.GaussianBlur(radius: 2.5).identifier == "blur(2.5)")
        #expect(ImageProcessors.Tint(RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)).identifier == "tint(ff000080)")
    }

    /// The identifier is the result's cache key: values that differ past three decimals (which
    /// render differently) once shared one, so the server answered `blur:1.0004` with the
    /// cached `blur:1.0001`.
    @Test func fractionalParametersKeepEveryDigitInTheIdentifier() throws {
        let nearby: [[any ImageProcessing]] = [
            [.gaussianBlur(radius: 1.0001), .gaussianBlur(radius: 1.0004)],
            [.roundedCorners(radius: 2.0001), .roundedCorners(radius: 2.0004)],
            [.rotate(degrees: 10.0001), .rotate(degrees: 10.0004)],
        ]
        for pair in nearby { #expect(pair[0].identifier != pair[1].identifier, "\(pair[0].identifier)") }
        let parsed = try ImageProcessorSpec.parse("blur:1.0001").map(\.identifier)
        let other = try ImageProcessorSpec.parse("blur:1.0004").map(\.identifier)
        #expect(parsed != other)
        #expect(ImageProcessors.GaussianBlur(radius: 0.1 + 0.2).identifier == "blur(0.30000000000000004)")
    }

    @Test func identifiersDifferWhenParametersDiffer() {
        let variants: [any ImageProcessing] = [
            .resize(width: 256, height: 256), .resize(width: 256, height: 255), .resize(width: 256, height: 256, mode: .fill),
            .resize(width: 256, height: 256, mode: .exact), .resize(width: 256, height: 256, upscale: true),
            .crop(x: 0, y: 0, width: 10, height: 10), .crop(x: 1, y: 0, width: 10, height: 10), .cropToSquare(),
            .flip(.horizontal), .flip(.vertical), .rotate(degrees: 90), .rotate(degrees: 180),
            .rotate(degrees: 30), .rotate(degrees: 30, background: .white), .rotate(degrees: 30.5),
            .roundedCorners(radius: 12), .roundedCorners(radius: 13), .roundedCorners(radius: 12, border: .init(width: 2, color: .black)),
            .roundedCorners(radius: 12, border: .init(width: 2, color: .white)), .roundedCorners(radius: 12, border: .init(width: 3, color: .black)),
            .circle(), .circle(border: .init(width: 2, color: .black)), .gaussianBlur(radius: 2), .gaussianBlur(radius: 2.25),
            .tint(.black), .tint(RGBAColor(red: 0, green: 0, blue: 0, alpha: 128)), .grayscale(),
        ]
        let identifiers = variants.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count, "\(identifiers)")
        #expect(Set([ImageProcessors.Resize(width: 1, height: 1), .init(width: 1, height: 1), .init(width: 2, height: 1)]).count == 2)
    }

    /// The horizontal flip mirrors four pixels at a time and the rest one by one: every width from
    /// 1 to 11, rows packed and padded, must come out exactly mirrored.
    @Test func horizontalFlipMirrorsEveryWidthExactly() throws {
        for width in 1...11 {
            for padding in [0, 12] {
                let height = 3, bytesPerRow = width * 4 + padding
                let pixels = (0..<bytesPerRow * height).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
                let image = Image(format: .png, pixelWidth: width, pixelHeight: height, bytesPerRow: bytesPerRow, pixels: pixels, isOpaque: false)
                let flipped = try image.processed(by: [.flip(.horizontal)])
                #expect(flipped.pixelWidth == width && flipped.pixelHeight == height && flipped.bytesPerRow == width * 4)
                for y in 0..<height {
                    for x in 0..<width {
                        let source = y * bytesPerRow + (width - 1 - x) * 4, target = (y * width + x) * 4
                        #expect(Array(flipped.pixels[target..<target + 4]) == Array(pixels[source..<source + 4]), "width \(width), padding \(padding), (\(x), \(y))")
                    }
                }
            }
        }
    }

    @Test func compositionIsTheChainItNames() throws {
        let chain: [any ImageProcessing] = [.resize(width: 20, height: 20, mode: .fill), .circle(), .grayscale()]
        let composed = ImageProcessors.Composition(chain)
        #expect(composed.identifier == "resize(20x20,fill,upscale:false),circle,grayscale")
        let one = try Self.photo.processed(by: [composed]), sequence = try Self.photo.processed(by: chain)
        #expect(one.pixels == sequence.pixels && one.pixelWidth == 20 && one.pixelHeight == 20)
        #expect(composed == .composition(chain) && composed != .composition(Array(chain.dropLast())))
    }

    @Test func anonymousProcessorRunsItsClosureUnderItsIdentifier() throws {
        let clear = ImageProcessors.Anonymous(identifier: "com.example.clear") { image in
            var result = image
            result.pixels = [UInt8](repeating: 0, count: image.pixels.count)
            result.isOpaque = false
            return result
        }
        #expect(clear.identifier == "com.example.clear")
        let result = try Self.photo.processed(by: [.cropToSquare(), clear])
        #expect(result.pixelWidth == 30 && result.pixels.allSatisfy { $0 == 0 })
        let failing = ImageProcessors.Anonymous(identifier: "fails") { _ throws(ImageProcessingError) in
            throw .invalidParameter(processor: "fails", reason: "always")
        }
        #expect(throws: ImageProcessingError.invalidParameter(processor: "fails", reason: "always")) { try Self.photo.processed(by: [failing]) }
    }

    @Test func animationsAreProcessedFrameByFrame() throws {
        let gif = try ImageCoderRegistry.default.decode(try SampleImages.gif(width: 40, height: 30, count: 5))
        #expect(gif.frames.count == 5)
        let processed = try gif.processed(by: [.resize(width: 20, height: 20, mode: .fill), .roundedCorners(radius: 4)], animated: true)
        #expect(processed.frames.count == 5 && processed.frameCount == 5)
        #expect(processed.frames.map(\.duration) == gif.frames.map(\.duration))
        #expect(processed.loopCount == gif.loopCount)
        #expect(processed.pixelWidth == 20 && processed.pixelHeight == 20 && processed.pixels == processed.frames[0].pixels)
        #expect(!processed.isOpaque)  // rounded corners
        for (index, frame) in processed.frames.enumerated() {
            let alone = try gif.frame(at: index).processed(by: [.resize(width: 20, height: 20, mode: .fill), .roundedCorners(radius: 4)])
            #expect(frame.pixels == alone.pixels, "frame \(index)")
        }
        #expect(Set(processed.frames.map(\.pixels)).count == 5, "frames stay distinct")
        // Without `animated`, the first frame only.
        let still = try gif.processed(by: [.grayscale()])
        #expect(still.frames.isEmpty && !still.isAnimated)
        #expect(still.pixels == (try gif.frame(at: 0).processed(by: [.grayscale()])).pixels)
    }

    @Test func exifOrientationIsAppliedBeforeProcessing() throws {
        var sideways = SampleImages.pattern(width: 40, height: 30, seed: 4)
        sideways.orientation = .right
        let result = try sideways.processed(by: [.crop(x: 0, y: 0, width: 30, height: 40)])
        #expect(result.orientation == .up && result.pixels == sideways.oriented().pixels)
    }

    @Test func cropPastTheEdgesIsCutToTheImage() throws {
        let image = Self.photo  // 40 × 30
        let cases: [(ImageProcessors.Crop, (x: Int, y: Int, width: Int, height: Int))] = [
            (.crop(x: 30, y: 0, width: 20, height: 10), (30, 0, 10, 10)),
            (.crop(x: -1, y: -2, width: 5, height: 5), (0, 0, 4, 3)),
            (.crop(x: -100, y: -100, width: 1000, height: 1000), (0, 0, 40, 30)),
            (.crop(x: 35, y: 25, width: Int.max, height: Int.max), (35, 25, 5, 5)),
            (.crop(x: -1_000_000_000_000, y: 10, width: Int.max, height: 1), (0, 10, 40, 1)),
        ]
        for (crop, cut) in cases {
            let result = try image.processed(by: [crop])
            let exact = try image.processed(by: [.crop(x: cut.x, y: cut.y, width: cut.width, height: cut.height)])
            #expect(result.pixelWidth == cut.width && result.pixelHeight == cut.height, "\(crop.identifier)")
            #expect(result.pixels == exact.pixels, "\(crop.identifier)")
            // The memory estimate reports the cut size too.
            let size = crop.outputSize(width: 40, height: 30)
            #expect(size.width == cut.width && size.height == cut.height, "\(crop.identifier)")
        }
        #expect(try image.processed(by: [.crop(x: 0, y: 0, width: 40, height: 30)]).pixels == image.pixels)
    }

    @Test func badParametersThrowTypedErrors() {
        let cases: [(any ImageProcessing, String)] = [
            (.resize(width: 0, height: 10), "zero size"),
            (.resize(width: -5, height: 10, mode: .exact), "negative size"),
            (.crop(x: 40, y: 0, width: 20, height: 10), "crop right of the image"),
            (.crop(x: -6, y: 0, width: 5, height: 5), "crop left of the image"),
            (.crop(x: 0, y: 30, width: 5, height: 5), "crop below the image"),
            (.crop(x: 0, y: 0, width: 0, height: 5), "empty crop"),
            (.crop(x: 0, y: 0, width: 5, height: -5), "negative crop"),
            (.crop(x: Int.max, y: 0, width: Int.max, height: 5), "overflowing crop"),
            (.crop(x: Int.min, y: 0, width: Int.max, height: 5), "crop ending at -1"),
            (.gaussianBlur(radius: -1), "negative blur"),
            (.gaussianBlur(radius: .nan), "NaN blur"),
            (.roundedCorners(radius: -3), "negative radius"),
            (.roundedCorners(radius: 3, border: .init(width: -1, color: .black)), "negative border"),
            (.rotate(degrees: .infinity), "infinite angle"),
        ]
        for (processor, what) in cases {
            #expect(throws: ImageProcessingError.self, "\(what)") { try Self.photo.processed(by: [processor]) }
            do { _ = try processor.process(Self.photo) } catch {
                guard case let .invalidParameter(name, _) = error else { Issue.record("\(what): \(error)"); continue }
                #expect(name == processor.identifier)
            }
        }
        #expect(throws: ImageProcessingError.tooLarge(width: 100_000, height: 75_000)) {
            try Self.photo.processed(by: [.resize(width: 100_000, height: 100_000, upscale: true)])
        }
        let empty = Image(format: .png, pixelWidth: 0, pixelHeight: 0, pixels: [], isOpaque: true)
        #expect(throws: ImageProcessingError.self) { try empty.processed(by: [.gaussianBlur(radius: 2)]) }
    }

    @Test func resizeNeverUpscalesUnlessAsked() throws {
        let small = Self.photo  // 40 × 30
        func size(_ p: any ImageProcessing) throws -> [Int] { let r = try small.processed(by: [p]); return [r.pixelWidth, r.pixelHeight] }
        #expect(try size(.resize(width: 100, height: 100)) == [40, 30])
        #expect(try size(.resize(width: 100, height: 100, upscale: true)) == [100, 75])
        #expect(try size(.resize(width: 100, height: 100, mode: .fill)) == [40, 30])
        #expect(try size(.resize(width: 20, height: 100, mode: .fill)) == [20, 30])  // cropped to the target's shape
        #expect(try size(.resize(width: 100, height: 100, mode: .fill, upscale: true)) == [100, 100])
        #expect(try size(.resize(width: 100, height: 10, mode: .exact)) == [40, 10])
        #expect(try size(.resize(width: 100, height: 10, mode: .exact, upscale: true)) == [100, 10])
        #expect(try size(.resize(width: 20, height: 20)) == [20, 15])
    }

    @Test func exportOrientsProcessesFitsAndEncodes() throws {
        var sideways = SampleImages.pattern(width: 80, height: 40, seed: 5)
        sideways.orientation = .right
        let export = ImageExport(maxSize: (30, 30), format: .png, processors: [.grayscale()])
        let (data, format) = try export.export(sideways)
        let written = try ImageCoderRegistry.default.decode(data)
        #expect(format == .png && written.pixelWidth == 15 && written.pixelHeight == 30)
        let p = written.pixel(x: 7, y: 20)
        #expect(p.r == p.g && p.g == p.b)
        #expect(ImageExport(maxSize: (30, 30)).decodingOptions.thumbnailMaxPixelSize == 30)
        #expect(export.decodingOptions.thumbnailMaxPixelSize == nil, "processors see the full image")
    }
}
