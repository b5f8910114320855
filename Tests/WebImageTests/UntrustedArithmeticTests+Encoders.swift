import Foundation
import Testing
import WebImage

extension HeavyTests.UntrustedArithmeticTests {
    /// libavif reports each frame's duration in seconds, a Double it divides from the file's
    /// 32-bit sample delta and timescale: with timescale 0 it is infinite (`Int(_:)` of it trapped).
    @Test func avifDurationsFromZeroAndOneTimescales() throws {
        let frames = (0..<2).map { ImageFrame(pixels: [UInt8($0 * 100), 20, 30, 255], duration: .milliseconds(40)) }
        let avif = try AVIFCoder().encode(Image(format: .avif, pixelWidth: 1, pixelHeight: 1, frames: frames, loopCount: 0), as: .avif, quality: 1)
        let mdhd = try #require(avif.firstRange(of: Data("mdhd".utf8)))
        let stts = try #require(avif.firstRange(of: Data("stts".utf8)))
        // mdhd (version 0): version and flags, creation and modification times, then the timescale.
        let timescale = mdhd.upperBound + 12
        // stts: version and flags, entry count, then (sample count, sample delta) pairs.
        let delta = stts.upperBound + 12
        for (scale, sampleDelta): (UInt32, UInt32) in [(0, 40), (1, .max), (0, 0), (.max, .max)] {
            var patched = avif
            patched.replaceSubrange(timescale..<(timescale + 4), with: ExtremePNG.be32(scale))
            patched.replaceSubrange(delta..<(delta + 4), with: ExtremePNG.be32(sampleDelta))
            if let image = try? HeavyTests.ExtremeValueDecodingTests.everyPath(patched).get() {
                #expect(image.frames.allSatisfy { $0.duration >= .milliseconds(11) && $0.duration <= .milliseconds(Int(Int32.max)) })
            }
            if let animation = try? AVIFCoder().animatedDecoder(for: patched, options: .default) {
                #expect((0..<animation.frameCount).allSatisfy { animation.duration(at: $0) <= .milliseconds(Int(Int32.max)) })
            }
        }
    }

    /// A caller's `Image` can hold any sizes, durations and loop counts: each encoder refuses
    /// what it cannot write with a typed error and clamps what its format clamps.
    @Test func encodersTakeExtremeImagesWithoutTrapping() throws {
        let pixel: [UInt8] = [10, 20, 30, 255]
        // A row stride past Int32 with one row: the buffer is valid, the C libraries take strides as `int`.
        var wide = Image(format: .png, pixelWidth: 1, pixelHeight: 1, pixels: pixel, isOpaque: true)
        wide.bytesPerRow = Int(Int32.max) + 1
        // A bytesPerRow so large that rows × stride + one row passes Int.max.
        var overflowing = Image(format: .png, pixelWidth: 1, pixelHeight: 3, pixels: pixel + pixel + pixel, isOpaque: true)
        overflowing.bytesPerRow = Int.max / 2
        #expect(overflowing.bufferProblem != nil)
        for format in [ImageFormat.jpeg, .png, .webp, .gif, .apng] {
            #expect(throws: ImageEncodingError.self) { _ = try ImageCoderRegistry.default.encode(overflowing, as: format) }
            if format == .jpeg {
                #expect(throws: ImageEncodingError.self) { _ = try ImageCoderRegistry.default.encode(wide, as: format) }
            } else {
                #expect(try ImageCoderRegistry.default.decode(ImageCoderRegistry.default.encode(wide, as: format)).pixelWidth == 1)
            }
        }
        // NaN quality, which no clamp places: a typed error from every encoder that reads the quality.
        let still = Image(format: .png, pixelWidth: 1, pixelHeight: 1, pixels: pixel, isOpaque: true)
        for format in [ImageFormat.jpeg, .webp, .avif, .heic] {
            #expect(throws: ImageEncodingError.self) { _ = try ImageCoderRegistry.default.encode(still, as: format, quality: .nan) }
        }
        #expect(throws: ImageEncodingError.self) { _ = try JPEGCoder.encode(cmyk: [0, 0, 0, 0], width: Int.max / 2, height: 4, quality: 1) }
        // Durations of ±Int64.max seconds, loop counts of Int.min and Int.max.
        let durations: [Duration] = [.seconds(Int64.max), .seconds(Int64.min), .zero, .milliseconds(655_351)]
        for loopCount in [Int.min, Int.max] {
            let frames = durations.enumerated().map { ImageFrame(pixels: [UInt8($0.offset * 60), 20, 30, 255], duration: $0.element) }
            let image = Image(format: .gif, pixelWidth: 1, pixelHeight: 1, frames: frames, loopCount: loopCount)
            let gif = try ImageCoderRegistry.default.decode(ImageCoderRegistry.default.encode(image, as: .gif))
            #expect(gif.frames.map(\.duration) == [.milliseconds(655_350), .milliseconds(100), .milliseconds(100), .milliseconds(655_350)])
            #expect(gif.loopCount == (loopCount < 0 ? 0 : 65_535))
            let apng = try ImageCoderRegistry.default.decode(ImageCoderRegistry.default.encode(image, as: .apng))
            #expect(apng.frames.map(\.duration) == [.milliseconds(655_350), .milliseconds(100), .milliseconds(100), .milliseconds(655_350)])
            #expect(apng.loopCount == (loopCount < 0 ? 0 : Int(UInt32.max)))
        }
        let endless = [Duration.seconds(Int64.max), .seconds(1)].map { ImageFrame(pixels: pixel, duration: $0) }
        #expect(Image(format: .gif, pixelWidth: 1, pixelHeight: 1, frames: endless, loopCount: 0).totalDuration == .seconds(Int64.max))
        // GIFWriter's public frames: fields past 16 bits are typed errors, delays clamp.
        for frame in [GIFWriter.Frame(left: Int.max, top: 0, width: 1, height: 1, indices: [0]),
                      GIFWriter.Frame(left: 0, top: 0, width: Int.max, height: 2, indices: [0]),
                      GIFWriter.Frame(left: 0, top: 0, width: 1, height: 1, indices: [0], transparentIndex: Int.min)] {
            #expect(throws: ImageEncodingError.self) { _ = try GIFWriter(width: 1, height: 1, globalPalette: [0, 0, 0], frames: [frame]).encode() }
        }
        let clamped = GIFWriter.Frame(left: 0, top: 0, width: 1, height: 1, indices: [0], delayCentiseconds: Int.min)
        #expect(try ImageCoderRegistry.default.decode(GIFWriter(width: 1, height: 1, globalPalette: [0, 0, 0], frames: [clamped]).encode()).pixelWidth == 1)
    }
}
