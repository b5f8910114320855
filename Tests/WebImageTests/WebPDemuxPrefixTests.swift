import Foundation
import Testing
@testable import WebImage

/// libwebp's demuxer keeps a record of every frame it reads (about 150 bytes each: 150 MB for
/// the million one-pixel frames of a 48 MB file, held for a request that keeps 256 of them), so
/// a decode that keeps at most ``ImageDecodingOptions/maxFrameCount`` frames shows it only those
/// (stop 52). Later frames are found by ``WebPFrameIndex`` and checked one by one as ever.
extension HeavyTests {
    @Suite("WebP: the demuxer reads only the frames a decode keeps")
    struct WebPDemuxPrefixTests {
        /// `file` (a WebP) with an `ANMF` chunk appended that holds a frame header and no
        /// bitstream: the demuxer refuses a file with such a frame.
        static func withEmptyFrame(_ file: Data) -> Data {
            let header: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 2]
            var body = Data(file.dropFirst(8))
            body.append(contentsOf: Array("ANMF".utf8) + [16, 0, 0, 0] + header)
            let size = body.count
            return Data(Array("RIFF".utf8) + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: size >> $0) }) + body
        }

        static func keeping(_ frames: Int) -> ImageDecodingOptions {
            var options = ImageDecodingOptions.default
            options.maxFrameCount = frames
            return options
        }

        /// A frame past those kept is not read by the demuxer: a damaged one there no longer
        /// fails the decode of the first two (as a browser shows the frames before a break).
        @Test func aDamagedFramePastThoseKeptIsNotRead() throws {
            let file = Self.withEmptyFrame(try HeavyTests.WebPChunkWalkTests.manyFrameWebP(2))
            #expect(throws: ImageDecodingError.self) { _ = try WebPCoder().decode(file, options: .default) }
            let kept = try WebPCoder().decode(file, options: Self.keeping(2))
            #expect(kept.frames.map(\.pixels) == [[255, 0, 0, 255], [0, 0, 255, 255]])
            let lazy = try WebPAnimationDecoder(file, options: Self.keeping(2))
            #expect(try lazy.frame(at: 1).pixels == [0, 0, 255, 255])
        }

        /// Frames past the demuxed ones are still found, by the index, by a decoder asked for them.
        @Test func framesPastThoseKeptAreFoundByTheIndex() throws {
            let file = try HeavyTests.WebPChunkWalkTests.manyFrameWebP(50_000)
            let lazy = try WebPAnimationDecoder(file, options: Self.keeping(3))
            #expect(lazy.frameCount == 50_000)
            #expect(try lazy.frame(at: 2).pixels == [255, 0, 0, 255])
            #expect(try lazy.frame(at: 3).pixels == [0, 0, 255, 255])
            #expect(try lazy.frame(at: 49_999).pixels == [0, 0, 255, 255])
        }
    }
}
