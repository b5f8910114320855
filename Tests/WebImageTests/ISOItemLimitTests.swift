import Foundation
import Testing
@testable import WebImage

/// A HEIF-family file's items are counted before libheif or libavif parse it (red team, stop 51):
/// their parses take time that grows with the square of the items, so 10,000 items sharing the
/// primary image's data — a 560 KB HEIC — cost 6.7 s of CPU in `info` (a 3.5 MB AVIF of 60,000
/// items, 11 s), in C where no deadline reaches. Both are refused at once now (0.01 s).
@Suite("HEIF and AVIF: the item count is limited before parsing")
struct ISOItemLimitTests {
    static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { be32(8 + body.count) + Array(type.utf8) + body }
    static func fullBox(_ type: String, version: UInt8, _ body: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + body) }

    /// `ftyp` with `brand`, then a `meta` box holding `children`.
    static func file(brand: String, _ children: [UInt8]) -> Data {
        Data(box("ftyp", Array(brand.utf8) + [0, 0, 0, 0] + Array("mif1".utf8) + Array(brand.utf8))
            + fullBox("meta", version: 0, fullBox("hdlr", version: 0, [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13)) + children))
    }

    @Test func everyCountingBoxIsRead() {
        func count(_ children: [UInt8]) -> Int { Self.file(brand: "heic", children).withUnsafeBytes { ISOItemLimit.count($0) } }
        #expect(count(Self.fullBox("iinf", version: 0, [0x13, 0x88])) == 5_000)
        #expect(count(Self.fullBox("iinf", version: 1, Self.be32(70_000))) == 70_000)
        #expect(count(Self.fullBox("iloc", version: 1, [0x44, 0x00, 0x0B, 0xB8])) == 3_000)
        #expect(count(Self.fullBox("iloc", version: 2, [0x44, 0x00] + Self.be32(90_000))) == 90_000)
        #expect(count(Self.box("iprp", Self.box("ipco", []) + Self.fullBox("ipma", version: 0, Self.be32(4_000)))) == 4_000)
        #expect(count(Self.fullBox("iinf", version: 0, [0, 3])) == 3)
        // A box that does not fit stops the walk without a trap.
        #expect(Self.file(brand: "heic", Self.be32(0x7FFF_FFF0) + Array("iinf".utf8)).withUnsafeBytes { ISOItemLimit.count($0) } == 0)
    }

    @Test(arguments: [(ImageFormat.heic, "heic"), (.avif, "avif")])
    func aFileOfTooManyItemsIsRefusedBeforeTheLibraryParsesIt(format: ImageFormat, brand: String) throws {
        let file = Self.file(brand: brand, Self.fullBox("iinf", version: 1, Self.be32(60_000)))
        #expect(ImageFormat(sniffing: file) == format)
        let cpu = ThreadCPUClock.current(), start = cpu.used
        #expect {
            _ = try ImageCoderRegistry.default.readHeader(file)
        } throws: { error in
            guard case ImageDecodingError.corrupt(_, let reason) = error else { return false }
            return reason.contains("60000 items")
        }
        #expect(cpu.used - start < .milliseconds(200))
    }
}
