import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Bad input must end in an ``ImageDecodingError`` (typed throws make any other error
/// impossible) and never in a crash, a hang or a large allocation.
@Suite("Truncated, corrupt and lying files", .cpuBound)
struct SafetyTests {
    static let animatedFixtures: [(String, Data)] = [
        ("gif-disposal", try! AnimationTests.disposalGIF()),
        ("gif-sample", try! SampleImages.gif(width: 40, height: 30, count: 3)),
        ("webp-animated", try! SampleImages.animatedWebP(width: 40, height: 30, count: 3)),
    ]

    static var everyFile: [(String, Data)] { Fixtures.all.map { ($0.name, $0.data) } + animatedFixtures }

    @Test func truncatedFilesAreErrors() {
        for (name, data) in Self.everyFile {
            // Cut before the last eight bytes (beyond every format's trailer) at several points.
            for fraction in [0.0, 0.1, 0.3, 0.5, 0.7, 0.9] {
                let length = max(1, Int(Double(data.count - 8) * fraction))
                let cut = Data(data.prefix(length))
                #expect(throws: ImageDecodingError.self, "\(name) cut at \(length) of \(data.count)") {
                    _ = try ImageCoderRegistry.default.decode(cut, options: .init(strict: true))
                }
                // Lenient decoding gives what was decoded, flagged, where the format allows it.
                expectErrorOrPartial("\(name) cut at \(length) of \(data.count)") { try ImageCoderRegistry.default.decode(cut) }
            }
        }
    }

    @Test func corruptedFilesNeverCrash() {
        for (name, data) in Self.everyFile {
            var generator = SplitMix(seed: UInt64(data.count))
            for round in 0..<40 {
                var corrupt = data
                for _ in 0..<(1 + round % 4) {
                    let at = Int(generator.next() % UInt64(data.count))
                    corrupt[at] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                }
                do {
                    let image = try ImageCoderRegistry.default.decode(corrupt)
                    // Whatever decodes must still be a consistent image.
                    #expect(image.pixels.count >= image.bytesPerRow * image.pixelHeight, "\(name)")
                } catch {
                    #expect(!error.description.isEmpty)
                }
            }
        }
    }

    @Test func zeroBytesAndTextAreTypedErrors() {
        #expect(throws: ImageDecodingError.empty) { _ = try ImageCoderRegistry.default.decode(Data()) }
        for coder in [JPEGCoder() as any ImageDecoding, PNGCoder(), GIFCoder(), WebPCoder()] {
            #expect(throws: ImageDecodingError.empty) { _ = try coder.decode(Data(), options: .default) }
            #expect(throws: ImageDecodingError.self) { _ = try coder.decode(Data("text named photo.jpg\n".utf8), options: .default) }
        }
    }

    @Test func hugeGIFScreenIsRefusedFromTheHeader() throws {
        let data = GIFBomb.header()
        #expect(data.count < 64)
        #expect(try GIFCoder().readHeader(data).pixelWidth == 65_535)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 65_535, height: 65_535, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test func gifFramesAddUpAgainstTheLimit() throws {
        // 1000 × 1000 × 60 frames = 60 MP over the 50 MP default, in under a kilobyte.
        let data = GIFBomb.manyFrames(width: 1000, height: 1000, frames: 60)
        #expect(data.count < 1_000)
        #expect(try GIFCoder().readHeader(data).frameCount == 60)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 1000, height: 1000, frames: 60, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test func gifFramesLargerThanTheCanvasCountTheirOwnArea() throws {
        // A 10 × 10 canvas whose only frame declares 65535 × 65535: refused before decoding it.
        var data = GIFBomb.header(width: 10, height: 10)
        data.replaceSubrange(24..<28, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try GIFCoder().readHeader(data).pixelWidth == 10)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 10, height: 10, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test func hugeWebPCanvasIsRefusedFromTheHeader() throws {
        let data = try WebPBomb.header()
        #expect(data.count < 200)
        let header = try WebPCoder().readHeader(data)
        #expect(header.pixelWidth == 100_000 && header.pixelHeight == 100_000 && header.frameCount == 1)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(data)
        }
    }

    @Test func hugePNGAndJPEGAreRefusedFromTheHeader() throws {
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(PNGBomb.header(width: 100_000, height: 100_000))
        }
        // JPEG sides are 16-bit, and libjpeg-turbo reads at most 65500: the largest JPEG there is.
        #expect(throws: ImageDecodingError.tooManyPixels(width: 65_500, height: 65_500, frames: 1, limit: 50_000_000)) {
            _ = try ImageCoderRegistry.default.decode(JPEGBomb.header(width: 65_500, height: 65_500))
        }
    }
}

/// A small deterministic random generator (SplitMix64): the same seed, the same inputs.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
