import Foundation
import Testing
@testable import WebImage

/// Reading a header costs little however many frames, entries or pages a file declares (red team,
/// stop 49): `serve` reads a source's header before the processing deadline starts, holding a
/// render slot, and these small files held one for seconds. Measured in a debug build before the
/// fix: 11.8 s (GIF: a palette built and scanned per frame), 4.9 s (ICO: each entry's bitmap
/// palette copied, its header read twice), 12 s (TIFF: libtiff loaded the 600,000-entry strip
/// arrays with every directory). Now: about 1 s, 0.2 s and 0.05 s of CPU.
extension HeavyTests {
    @Suite("Header walks: cheap whatever the count")
    struct HeaderWalkCostTests {
        /// `count` one-pixel frames, each with a graphic control block (23 bytes a frame).
        static func manyFrameGIF(_ count: Int) -> Data {
            let screen: [UInt8] = le16(1) + le16(1) + [0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF]
            let loop: [UInt8] = [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]
            var gif = Data("GIF89a".utf8)
            gif.append(contentsOf: screen)
            gif.append(contentsOf: loop)
            let control: [UInt8] = [0x21, 0xF9, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2C]
            let descriptor: [UInt8] = le16(0) + le16(0) + le16(1) + le16(1)
            let frame: [UInt8] = control + descriptor + [0x00, 0x02, 0x02, 0x44, 0x01, 0x00]
            gif.reserveCapacity(gif.count + frame.count * count + 1)
            for _ in 0..<count { gif.append(contentsOf: frame) }
            return gif + [0x3B]
        }

        /// 65,535 directory entries, all naming one 16 × 16 8-bit bitmap with a 256-colour palette.
        static func manyEntryICO() -> Data {
            let count = 65_535, side = 16
            var bitmap: [UInt8] = le32(40) + le32(side) + le32(side * 2)
            bitmap += le16(1) + le16(8)
            bitmap += [0, 0, 256, 0].flatMap { le32($0) } + le32(0)
            bitmap += [UInt8](repeating: 0, count: 256 * 4 + side * side + 4 * side)
            var ico = Data(le16(0) + le16(1) + le16(count))
            let offset = 6 + 16 * count
            let size: [UInt8] = [UInt8(side), UInt8(side), 0, 0]
            let entry: [UInt8] = size + le16(1) + le16(8) + le32(bitmap.count) + le32(offset)
            for _ in 0..<count { ico.append(contentsOf: entry) }
            return ico + bitmap
        }

        /// 1,000 directories of a 1 × 600,000 grey image in one-row strips, all sharing one pair
        /// of 600,000-entry strip arrays (5.5 MB).
        static func manyDirectoryTIFF() -> Data {
            let rows = 600_000, directories = 1_000
            let pixels = 8, offsets = pixels + rows, counts = offsets + 4 * rows, first = counts + 4 * rows
            func directory(next: Int) -> [UInt8] {
                let tags: [(UInt16, UInt16, Int, Int)] = [
                    (256, 3, 1, 1), (257, 4, 1, rows), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
                    (273, 4, rows, offsets), (277, 3, 1, 1), (278, 4, 1, 1), (279, 4, rows, counts)]
                var bytes = le16(tags.count)
                for (tag, type, count, value) in tags {
                    bytes += le16(Int(tag)) + le16(Int(type))
                    bytes += le32(count) + le32(value)
                }
                return bytes + le32(next)
            }
            let size = directory(next: 0).count
            var tiff = Data([0x49, 0x49, 0x2A, 0x00] + le32(first))
            tiff.append(contentsOf: [UInt8](repeating: 0, count: rows))
            for row in 0..<rows { tiff.append(contentsOf: le32(pixels + row)) }
            for _ in 0..<rows { tiff.append(contentsOf: le32(1)) }
            for index in 0..<directories { tiff.append(contentsOf: directory(next: index < directories - 1 ? first + (index + 1) * size : 0)) }
            return tiff
        }

        static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16 & 0xFFFF) }

        /// The header, and the CPU it took on this thread.
        static func timedHeader(_ data: Data) throws -> (ImageHeader, Duration) {
            let clock = ThreadCPUClock.current()
            let start = clock.used
            let header = try ImageCoderRegistry.default.readHeader(data)
            return (header, clock.used - start)
        }

        @Test func aGIFOfManyFramesIsWalkedQuickly() async throws {
            // 200,000 frames (4.6 MB): about 4 s before, 0.35 s now (a debug build).
            let (header, spent) = try await offPool { try Self.timedHeader(Self.manyFrameGIF(200_000)) }
            #expect(header.format == .gif && header.frameCount == 200_000 && !header.hasAlpha)
            #expect(spent < .seconds(2), "the walk took \(spent) of CPU")
            // The transparent index still makes the header say alpha, without the palette built.
            var transparent = Self.manyFrameGIF(2)
            let control = try #require(transparent.firstRange(of: Data([0x21, 0xF9, 0x04])))
            transparent[control.upperBound] = 0x01  // "has a transparent index" (index 0)
            #expect(try GIFCoder().readHeader(transparent).hasAlpha)
        }

        /// The walk inside a decode stops at a cancel (a render's deadline, its client gone):
        /// the decode walks the frames again before it draws one (red team, stop 50).
        @Test func aGIFWalkStopsAtACancel() async throws {
            let file = Self.manyFrameGIF(400_000)
            let (error, spent) = await HeavyTests.DecodeCancellationTests.cancelSoonAfterStart {
                () throws(ImageDecodingError) in _ = try GIFCoder().decode(file, options: .default)
            }
            #expect(error == .cancelled, "the decode ran to its end or failed otherwise")
            #expect(spent < .milliseconds(100), "\(spent) of CPU after the cancel")
        }

        @Test func anICOOfManyEntriesIsWalkedQuickly() async throws {
            let (header, spent) = try await offPool { try Self.timedHeader(Self.manyEntryICO()) }
            #expect(header.format == .ico && header.pixelWidth == 16 && header.pixelHeight == 16)
            #expect(spent < .seconds(1.5), "the walk took \(spent) of CPU")
        }

        @Test func aTIFFOfManyDirectoriesIsWalkedQuickly() async throws {
            let file = Self.manyDirectoryTIFF()
            let (header, spent) = try await offPool { try Self.timedHeader(file) }
            #expect(header.format == .tiff && header.frameCount == 1_000 && header.pixelHeight == 600_000)
            #expect(spent < .seconds(1.5), "the walk took \(spent) of CPU")
            // Offsets loaded on demand still decode: the first page, every strip read.
            var options = ImageDecodingOptions.default
            options.firstFrameOnly = true
            let page = try TIFFCoder().decode(file, options: options)
            #expect(page.pixelWidth == 1 && page.pixelHeight == 600_000)
        }
    }
}
