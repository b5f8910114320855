import Foundation
import Testing
@testable import WebImage

/// Animated WebPs whose frames lie: outside the canvas, a bitstream of another size than the
/// `ANMF` header declares, a bitstream cut short. Each is a typed `.corrupt` error through every
/// entry point (the full decode, the registry, ``WebPAnimationDecoder``), never a trap.
@Suite("Animated WebP: hostile frames are typed errors", .cpuBound)
struct WebPAnimationHostileTests {
    typealias Bytes = ExtremeWebP

    /// One `ANMF` chunk: `x`, `y` as stored (half the offset), the declared size, its chunks.
    static func anmf(x: Int = 0, y: Int = 0, width: Int, height: Int, _ chunks: Data) -> Data {
        Bytes.chunk("ANMF", Data(Bytes.le24(x) + Bytes.le24(y) + Bytes.le24(width - 1) + Bytes.le24(height - 1) + Bytes.le24(80) + [0]) + chunks)
    }

    /// An animated WebP of `frames` (``anmf(x:y:width:height:_:)`` chunks) on a `width × height` canvas.
    static func file(width: Int, height: Int, _ frames: [Data]) -> Data {
        let body = Data("WEBP".utf8) + Bytes.chunk("VP8X", Data([0x12, 0, 0, 0] + Bytes.le24(width - 1) + Bytes.le24(height - 1)))
            + Bytes.chunk("ANIM", Data([0, 0, 0, 0, 0, 0])) + Data(frames.joined())
        return Data("RIFF".utf8) + Bytes.le32(body.count) + body
    }

    /// A lossless still's `VP8L` chunk (its header included), of a noisy `side × side` pattern.
    static func vp8l(side: Int, seed: Int = 1) -> Data {
        let rgba = WebPAnimationFixtures.pattern(width: side, height: side, seed: seed, opaque: false)
        return Data(WebPAnimationFixtures.still(rgba, width: side, height: side, lossless: true)[12...])
    }

    /// A lossy still's `ALPH` and `VP8 ` chunks (after its 18-byte `VP8X` chunk).
    static func lossyAlpha(side: Int) -> Data {
        let rgba = WebPAnimationFixtures.pattern(width: side, height: side, seed: 2, opaque: false)
        return Data(WebPAnimationFixtures.still(rgba, width: side, height: side, lossless: false)[30...])
    }

    /// `chunks`' last chunk with its payload cut in half (its size field says so).
    static func cutLastChunk(_ chunks: Data) -> Data {
        var offset = chunks.startIndex, last = offset
        while offset + 8 <= chunks.endIndex {
            last = offset
            let size = chunks[(offset + 4)..<(offset + 8)].reversed().reduce(0) { $0 << 8 | Int($1) }
            offset += 8 + size + size % 2
        }
        let tag = String(decoding: chunks[last..<(last + 4)], as: UTF8.self)
        let keep = (chunks.endIndex - last - 8) / 2
        return Data(chunks[chunks.startIndex..<last]) + Bytes.chunk(tag, Data(chunks[(last + 8)..<(last + 8 + keep)]))
    }

    static let cases: [(name: String, data: Data)] = [
        ("frame right of the canvas", file(width: 4, height: 4, [anmf(x: 1, width: 4, height: 4, vp8l(side: 4))])),
        ("frame at the largest offset", file(width: 4, height: 4, [anmf(x: 0xFF_FFFF, y: 0xFF_FFFF, width: 4, height: 4, vp8l(side: 4))])),
        ("bitstream smaller than declared", file(width: 8, height: 8, [anmf(width: 8, height: 8, vp8l(side: 4))])),
        ("bitstream larger than declared", file(width: 8, height: 8, [anmf(width: 2, height: 2, vp8l(side: 4))])),
        ("bitstream larger than the canvas", file(width: 4, height: 4, [anmf(width: 4, height: 4, vp8l(side: 6))])),
        ("lossless bitstream cut", file(width: 32, height: 32, [anmf(width: 32, height: 32, cutLastChunk(vp8l(side: 32)))])),
        ("lossy bitstream cut", file(width: 32, height: 32, [anmf(width: 32, height: 32, cutLastChunk(lossyAlpha(side: 32)))])),
        ("second frame cut", file(width: 32, height: 32, [
            anmf(width: 32, height: 32, vp8l(side: 32)),
            anmf(x: 2, y: 2, width: 16, height: 16, cutLastChunk(vp8l(side: 16, seed: 3))),
        ])),
    ]

    @Test(arguments: WebPAnimationHostileTests.cases.map(\.name))
    func aLyingFrameIsACorruptFileError(name: String) throws {
        let data = try #require(Self.cases.first { $0.name == name }?.data)
        let full = Result { () throws(ImageDecodingError) in try WebPCoder().decode(data, options: .default) }
        let registry = Result { () throws(ImageDecodingError) in try ImageCoderRegistry.default.decode(data) }
        let lazy = Result { () throws(ImageDecodingError) in
            let decoder = try WebPAnimationDecoder(data)
            for index in 0..<decoder.frameCount { _ = try decoder.frame(at: index) }
        }
        for (path, result) in [("full", full.map { _ in () }), ("registry", registry.map { _ in () }), ("frame by frame", lazy)] {
            guard case .failure(.corrupt(format: .webp, let reason)) = result else {
                Issue.record("\(name), \(path): \(result)")
                continue
            }
            #expect(!reason.isEmpty)
        }
    }

    /// A bitstream of another size than its `ANMF` header says is refused, where libwebp's
    /// `WebPAnimDecoder` draws it at the bitstream's size (its demuxer takes the size from the
    /// bitstream alone); the first frame of a file whose second is cut still decodes alone.
    @Test func refusalsWhereLibwebpDiffers() throws {
        let smaller = try #require(Self.cases.first { $0.name == "bitstream smaller than declared" }?.data)
        #expect(WebPAnimationFixtures.reference(smaller)?.frames.count == 1)
        #expect(throws: ImageDecodingError.self) { try WebPAnimationFixtures.decoded(smaller) }
        let secondCut = try #require(Self.cases.first { $0.name == "second frame cut" }?.data)
        let decoder = try WebPAnimationDecoder(secondCut)
        #expect(decoder.frameCount == 2)
        #expect(try decoder.frame(at: 0).pixels.count == 32 * 32 * 4)
        #expect(throws: ImageDecodingError.self) { try decoder.frame(at: 1) }
    }
}
