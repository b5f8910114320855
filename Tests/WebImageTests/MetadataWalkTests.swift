import Foundation
import Testing
@testable import WebImage

/// Metadata reads — EXIF orientation, colour profile, loop count — take their chunks from one
/// walk by chunk headers that looks at the cancel (stop 52): each had a loop of its own, the WebP
/// ones making a `String` or an `Array` of every chunk type, none looking at the cancel, and
/// `serve` read them several times a request (`ServerManyFrameWebPTests`).
extension HeavyTests {
    @Suite("Metadata reads: one cheap walk that stops at a cancel")
    struct MetadataWalkTests {
        /// `file` (a WebP) with an `EXIF` chunk at its end, after the frames as the format puts it,
        /// saying `orientation`: a little-endian TIFF header and one IFD entry (0x0112, SHORT).
        static func withEXIF(_ file: Data, orientation: UInt8) -> Data {
            let tiff: [UInt8] = Array("II".utf8) + [42, 0, 8, 0, 0, 0] + [1, 0] + [0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0] + [0, 0, 0, 0]
            var body = Data(file.dropFirst(8))
            body.append(contentsOf: Array("EXIF".utf8) + [UInt8(tiff.count), 0, 0, 0] + tiff)
            let size = body.count
            return Data(Array("RIFF".utf8) + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: size >> $0) }) + body
        }

        @Test func anEXIFChunkAfterManyFramesIsReadInOneCheapWalk() async throws {
            let file = Self.withEXIF(try HeavyTests.WebPChunkWalkTests.manyFrameWebP(300_000), orientation: 6)
            #expect(EXIFOrientation.read(fromWebP: Self.withEXIF(try HeavyTests.WebPChunkWalkTests.manyFrameWebP(2), orientation: 3)) == .down)
            let (orientations, spent) = try await offPool { () -> ([ImageOrientation], Duration) in
                let cpu = ThreadCPUClock.current(), start = cpu.used
                let orientations = [EXIFOrientation.read(fromWebP: file), ImageProperties.orientation(of: file, format: .webp)]
                return (orientations, cpu.used - start)
            }
            #expect(orientations == [.right, .right])
            let properties = try ImageProperties.read(from: file)
            #expect(properties.orientation == .right && properties.loopCount == 0 && properties.hasICCProfile == false)
            #expect(properties.header.frameCount == 300_000)
            // Debug build: 0.06 s now, 0.25 s with an `Array` made for each chunk type.
            #expect(spent < TestTime.scaled(.seconds(0.15)), "two orientation reads of 300,000 frames took \(spent) of CPU")
        }

        /// Each metadata read of a file of 2 M empty segments or chunks stops soon after a cancel
        /// (a JPEG's before its frame, a PNG's before `IDAT`, a WebP's before its bitstream).
        @Test func metadataReadsOfManyChunksStopAtACancel() async throws {
            let (jpeg, png) = try HeavyTests.WebPChunkWalkTests.manySegmentFiles(2_000_000)
            let webp = try HeavyTests.WebPChunkWalkTests.manyChunkWebP(2_000_000)
            let reads: [(String, @Sendable () -> Void)] = [
                ("JPEG colour", { _ = EmbeddedColor.read(from: jpeg, format: .jpeg) }),
                ("PNG orientation", { _ = EXIFOrientation.read(fromPNG: png) }),
                ("PNG colour", { _ = EmbeddedColor.read(from: png, format: .png) }),
                ("PNG CRC scan", { _ = PNGChunkScan.repairs(in: png) }),
                ("WebP orientation", { _ = ImageProperties.orientation(of: webp, format: .webp) }),
                ("WebP colour", { _ = EmbeddedColor.read(from: webp, format: .webp) }),
            ]
            for (name, read) in reads {
                let (_, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(1)) { () throws(ImageDecodingError) in read() }
                #expect(spent < TestTime.scaled(.milliseconds(40)), "\(name): \(spent) of CPU after the cancel")
            }
        }
    }
}
