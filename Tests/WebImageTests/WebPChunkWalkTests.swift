import Foundation
import Testing
@testable import WebImage

/// A WebP's chunks cost one pass however many there are (red team, stop 51): libwebp's
/// incremental decoder parses the chunk headers from the start at each call until it reaches the
/// bitstream, so a million empty chunks before a 1 × 1 image, given 256 bytes a call, took 37 s
/// of CPU (8 MB; 250,000 chunks, 2 MB: 2.7 s). The first piece now reaches the bitstream, and
/// the container walk keeps nothing per chunk and looks at the cancel.
extension HeavyTests {
    @Suite("WebP: many chunks cost one pass")
    struct WebPChunkWalkTests {
        /// A 1 × 1 WebP of `colour` with `chunks` empty unknown chunks before its bitstream.
        static func manyChunkWebP(_ chunks: Int, colour: [UInt8] = [200, 30, 30, 255]) throws -> Data {
            let plain = try WebPCoder().encode(Image(format: .webp, pixelWidth: 1, pixelHeight: 1, pixels: colour, isOpaque: true), as: .webp, quality: 0.9)
            let bitstream = [UInt8](plain.dropFirst(12))  // the one VP8 or VP8L chunk
            func le32(_ value: Int) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }
            var body = Array("WEBP".utf8) + Array("VP8X".utf8) + le32(10) + [UInt8](repeating: 0, count: 10)
            body.reserveCapacity(body.count + 8 * chunks + bitstream.count)
            let empty = Array("ZZZZ".utf8) + le32(0)
            for _ in 0..<chunks { body += empty }
            body += bitstream
            return Data(Array("RIFF".utf8) + le32(body.count) + body)
        }

        @Test func aStillBehindManyChunksDecodesInOnePass() async throws {
            let file = try Self.manyChunkWebP(250_000)
            let plain = try ImageCoderRegistry.default.decode(try Self.manyChunkWebP(0))
            let (image, spent) = try await offPool { () throws -> (Image, Duration) in
                let cpu = ThreadCPUClock.current(), start = cpu.used
                let image = try ImageCoderRegistry.default.decode(file)
                return (image, cpu.used - start)
            }
            #expect(image.pixelWidth == 1 && image.pixels == plain.pixels)
            #expect(spent < .seconds(1), "the decode took \(spent) of CPU")
        }

        @Test func aHeaderReadOfManyChunksStopsAtACancel() async throws {
            let file = try Self.manyChunkWebP(1_000_000)
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(1)) {
                () throws(ImageDecodingError) in _ = try WebPCoder().readHeader(file)
            }
            #expect(error == .cancelled, "the header read ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "\(spent) of CPU after the cancel")
        }
    }
}

extension HeavyTests.WebPChunkWalkTests {
    /// A `frames`-frame animation of one-pixel frames alternating red and blue, 20 ms each.
    static func manyFrameWebP(_ frames: Int, unknownChunksAfterFirst unknown: Int = 0) throws -> Data {
        func le(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func bitstream(_ colour: [UInt8]) throws -> [UInt8] {
            // Lossless, so the colours come back exactly.
            let still = try WebPCoder().encode(Image(format: .webp, pixelWidth: 1, pixelHeight: 1, pixels: colour, isOpaque: true), as: .webp, quality: 1)
            return [UInt8](still.dropFirst(12))  // its one VP8L chunk
        }
        let red = try bitstream([255, 0, 0, 255]), blue = try bitstream([0, 0, 255, 255])
        func frame(_ chunk: [UInt8]) -> [UInt8] {
            let header = le(0, 3) + le(0, 3) + le(0, 3) + le(0, 3) + le(20, 3) + [0x02]  // no blending, no disposal
            let payload = header + chunk
            return Array("ANMF".utf8) + le(payload.count, 4) + payload + (payload.count & 1 == 1 ? [0] : [])
        }
        let redFrame = frame(red), blueFrame = frame(blue)
        var body = Array("WEBP".utf8) + Array("VP8X".utf8) + le(10, 4) + [0x02, 0, 0, 0] + le(0, 3) + le(0, 3)
        body += Array("ANIM".utf8) + le(6, 4) + [0, 0, 0, 0] + le(0, 2)
        body.reserveCapacity(body.count + frames * max(redFrame.count, blueFrame.count))
        for index in 0..<frames {
            body += index.isMultiple(of: 2) ? redFrame : blueFrame
            if index == 0 { for _ in 0..<unknown { body += Array("ZZZZ".utf8) + le(0, 4) } }
        }
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }

    /// Every frame of 60,000 decodes in time that grows with the frames: libwebp's demuxer finds
    /// frame n by walking its list from the first (50,000 frames took 3.4 s through `info
    /// --decode`; now 0.6 s), so the frames are found through ``WebPFrameIndex``.
    @Test func everyFrameOfAManyFrameAnimationIsFoundAtOnce() async throws {
        let file = try Self.manyFrameWebP(60_000)
        let (image, spent) = try await offPool { () throws -> (Image, Duration) in
            let cpu = ThreadCPUClock.current(), start = cpu.used
            let image = try ImageCoderRegistry.default.decode(file)
            return (image, cpu.used - start)
        }
        #expect(image.frames.count == 60_000 && image.frames.allSatisfy { $0.duration == .milliseconds(20) })
        #expect(image.frames[0].pixels == [255, 0, 0, 255] && image.frames[59_999].pixels == [0, 0, 255, 255])
        #expect(spent < .seconds(2.5), "decoding every frame took \(spent) of CPU")
    }

    /// The demuxer keeps a record of every chunk: 6 M empty chunks between two frames held 308 MB
    /// (red team, stop 51). An animation with more than 4,096 chunks besides its frames is
    /// refused before the demuxer sees it; a few are read past as before.
    @Test func anAnimationOfManyOtherChunksIsRefusedBeforeTheDemuxer() throws {
        let few = try ImageCoderRegistry.default.decode(try Self.manyFrameWebP(2, unknownChunksAfterFirst: 10))
        #expect(few.frames.count == 2 && few.frames[1].pixels == [0, 0, 255, 255])
        #expect {
            _ = try ImageCoderRegistry.default.decode(try Self.manyFrameWebP(2, unknownChunksAfterFirst: 100_000))
        } throws: { error in
            guard case ImageDecodingError.corrupt(_, let reason) = error else { return false }
            return reason.contains("besides the frames")
        }
    }
}

extension HeavyTests.WebPChunkWalkTests {
    /// A 1 × 1 JPEG with `segments` empty COM segments after SOI, and a 1 × 1 PNG with `chunks`
    /// empty ancillary chunks before IDAT (4 and 12 bytes an item).
    static func manySegmentFiles(_ count: Int) throws -> (jpeg: Data, png: Data) {
        let pixel = Image(format: .png, pixelWidth: 1, pixelHeight: 1, pixels: [10, 20, 30, 255], isOpaque: true)
        let jpeg = try JPEGCoder().encode(pixel, as: .jpeg, quality: 0.9), png = try PNGCoder().encode(pixel, as: .png, quality: 1)
        var comments = Data(capacity: 4 * count)
        for _ in 0..<count { comments.append(contentsOf: [0xFF, 0xFE, 0x00, 0x02]) }
        // "zzZz" (ancillary, private, safe to copy) with an empty body: length 0, type, CRC-32 of the type.
        let type = Array("zzZz".utf8)
        let crc = type.withUnsafeBufferPointer { PNGChunkScan.crc32($0) }
        let chunk: [UInt8] = [0, 0, 0, 0] + type + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) }
        var chunks = Data(capacity: 12 * count)
        for _ in 0..<count { chunks.append(contentsOf: chunk) }
        let ihdrEnd = 8 + 25  // signature, then IHDR (13 bytes of data, 12 of frame)
        return (jpeg.prefix(2) + comments + jpeg.dropFirst(2), png.prefix(ihdrEnd) + chunks + png.dropFirst(ihdrEnd))
    }

    /// The walks over JPEG segments and PNG chunks look at the cancel (red team, stop 51: millions
    /// of empty segments in a 48 MB file kept a core busy for seconds after a deadline).
    @Test func decodesOfManySegmentsStopAtACancel() async throws {
        let (jpeg, png) = try Self.manySegmentFiles(2_000_000)
        #expect(try JPEGCoder().decode(Self.manySegmentFiles(10).jpeg, options: .default).pixelWidth == 1)
        #expect(try PNGCoder().decode(Self.manySegmentFiles(10).png, options: .default).pixelWidth == 1)
        for (name, file) in [("jpeg", jpeg), ("png", png)] {
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart(after: .milliseconds(1)) {
                () throws(ImageDecodingError) in
                _ = name == "jpeg" ? try JPEGCoder().decode(file, options: .default) : try PNGCoder().decode(file, options: .default)
            }
            #expect(error == .cancelled, "\(name): the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(150), "\(name): \(spent) of CPU after the cancel")
        }
    }
}
