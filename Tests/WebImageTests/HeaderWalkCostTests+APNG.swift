import Foundation
import Testing
@testable import WebImage

extension HeavyTests.HeaderWalkCostTests {
    /// `count` one-pixel frames of opaque red (67 bytes a frame): the first is the default image
    /// (IDAT), the others `fdAT`. Each frame's zlib stream is one stored block.
    static func manyFrameAPNG(_ count: Int) -> Data {
        func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            let crc = body.withUnsafeBytes { CRC32.checksum($0) }
            return be32(data.count) + body + be32(Int(crc))
        }
        let row: [UInt8] = [0, 255, 0, 0, 255]  // filter 0, then RGBA
        let adler = row.reduce((1, 0)) { sums, byte in ((sums.0 + Int(byte)) % 65_521, (sums.1 + sums.0 + Int(byte)) % 65_521) }
        let zlib: [UInt8] = [0x78, 0x01, 0x01, 5, 0, 0xFA, 0xFF] + row + be32(adler.1 << 16 | adler.0)
        func control(_ sequence: Int) -> [UInt8] {
            chunk("fcTL", be32(sequence) + be32(1) + be32(1) + be32(0) + be32(0) + [0, 1, 0, 10, 0, 0])
        }
        var png: [UInt8] = PNGChunks.signature + chunk("IHDR", be32(1) + be32(1) + [8, 6, 0, 0, 0])
        png += chunk("acTL", be32(count) + be32(0))
        png += control(0) + chunk("IDAT", zlib)
        png.reserveCapacity(png.count + 67 * count + 12)
        var sequence = 1
        for _ in 1..<max(count, 1) {
            png += control(sequence)
            png += chunk("fdAT", be32(sequence + 1) + zlib)
            sequence += 2
        }
        return Data(png + chunk("IEND", []))
    }

    /// 300,000 frames (20 MB): 0.7 s of CPU and 124 MB for `info` before (every chunk and frame
    /// kept in arrays, each frame with an array of its own; red team, stop 50), 0.3 s and 55 MB
    /// now (a debug build); the walk keeps nothing per frame.
    @Test func anAPNGOfManyFramesIsWalkedQuickly() async throws {
        let file = Self.manyFrameAPNG(300_000)
        let (header, spent) = try await offPool { try Self.timedHeader(file) }
        #expect(header.format == .apng && header.frameCount == 300_000 && header.pixelWidth == 1)
        #expect(spent < .seconds(1.5), "the walk took \(spent) of CPU")
        // A decode that keeps three frames records (and draws) three.
        var options = ImageDecodingOptions.default
        options.maxFrameCount = 3
        let image = try APNGCoder().decode(file, options: options)
        #expect(image.format == .apng && image.frames.count == 3)
        #expect(image.frames.allSatisfy { Array($0.pixels) == [255, 0, 0, 255] && $0.duration == .milliseconds(100) })
    }

    /// Header reads, decodes and animated decoders stop at a cancel during the walk (a render's
    /// deadline, its client gone), rather than showing the still image.
    @Test func anAPNGWalkStopsAtACancel() async throws {
        let file = Self.manyFrameAPNG(600_000)
        let (header, spentOnHeader) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart {
            () throws(ImageDecodingError) in _ = try APNGCoder().readHeader(file)
        }
        #expect(header == .cancelled, "the header read ran to its end or failed otherwise")
        #expect(spentOnHeader < .milliseconds(100), "\(spentOnHeader) of CPU after the cancel")
        let (decode, spentOnDecode) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart {
            () throws(ImageDecodingError) in _ = try APNGCoder().decode(file, options: .default)
        }
        #expect(decode == .cancelled, "the decode ran to its end or failed otherwise")
        #expect(spentOnDecode < .milliseconds(100), "\(spentOnDecode) of CPU after the cancel")
    }
}
