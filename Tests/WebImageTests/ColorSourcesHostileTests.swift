import Foundation
import Testing
@testable import WebImage

/// Colour stated by numbers a stranger chose — PNG `gAMA`/`cHRM`, AVIF/HEIF `nclx` code points,
/// BMP V5 endpoints, gammas and profile offsets — never traps and never breaks a decode: values
/// a profile cannot be built from are ignored with ``ImageRepairs/damagedMetadata``, code points
/// WebImage does not convert leave the image untagged.
@Suite("Colour management: hostile colour statements", .cpuBound)
struct ColorSourcesHostileTests {
    /// A 4 × 4 untagged PNG with `chunks` after its `IHDR`.
    static func png(_ chunks: [[UInt8]]) throws -> Data {
        var pixels: [UInt8] = []
        for index in 0..<16 { pixels += [UInt8(index * 16), 128, UInt8(255 - index * 16), 255] }
        let base = try ImageCoderRegistry.default.encode(
            Image(format: .png, pixelWidth: 4, pixelHeight: 4, pixels: pixels, isOpaque: true), as: .png)
        return base.prefix(33) + Data(chunks.joined()) + base.dropFirst(33)
    }

    static func gAMA(_ value: UInt32) -> [UInt8] { ExtremePNG.chunk("gAMA", ExtremePNG.be32(value)) }
    static func cHRM(_ values: [UInt32]) -> [UInt8] { ExtremePNG.chunk("cHRM", values.flatMap(ExtremePNG.be32)) }

    static let p3 = [31270, 32900, 68000, 32000, 26500, 69000, 15000, 6000].map(UInt32.init)

    @Test(arguments: [
        ("zero gamma", [gAMA(0)]),
        ("gamma over 10", [gAMA(UInt32.max)]),
        ("cHRM all zero", [cHRM(Array(repeating: 0, count: 8))]),
        ("cHRM all UInt32.max", [cHRM(Array(repeating: UInt32.max, count: 8))]),
        ("white y = 0", [cHRM([31270, 0] + Array(p3[2...]))]),
        ("primaries on a line", [cHRM([31270, 32900, 30000, 30000, 30000, 30000, 30000, 30000])]),
    ])
    func unusablePNGStatementsAreDamagedMetadata(_ name: String, _ chunks: [[UInt8]]) throws {
        let image = try ImageCoderRegistry.default.decode(try Self.png(chunks))
        #expect(image.sourceColorProfile == nil, "\(name)")
        #expect(image.repairs.contains(.damagedMetadata), "\(name): \(image.repairs)")
        #expect(image.pixelWidth == 4)
    }

    @Test func malformedChunkLengthsAreIgnored() throws {
        let short = ExtremePNG.chunk("cHRM", Array(repeating: 1, count: 31))
        let image = try ImageCoderRegistry.default.decode(try Self.png([short, ExtremePNG.chunk("gAMA", [0, 0])]))
        #expect(image.sourceColorProfile == nil && image.repairs.isEmpty)
    }

    @Test func randomPNGStatementsNeverTrap() throws {
        var random = SplitMix(seed: 0x6A3A)
        for round in 0..<150 {
            // Half near real values (x, y in 0…1), half anything.
            let values = (0..<8).map { _ in UInt32(truncatingIfNeeded: round % 2 == 0 ? random.next() % 110_000 : random.next()) }
            let gamma = UInt32(truncatingIfNeeded: round % 3 == 0 ? random.next() : random.next() % 200_000)
            let image = try ImageCoderRegistry.default.decode(try Self.png([Self.gAMA(gamma), Self.cHRM(values)]))
            #expect(image.pixelWidth == 4 && image.pixelHeight == 4)
        }
    }

    /// Every nclx code point 0…255 (and 65535) in an AVIF and a HEIF file: known ones convert,
    /// others leave the image untagged; none is damage, none traps.
    @Test func everyNCLXCodePointDecodes() throws {
        for file in ["avif-nclx-p3.avif", "heif-nclx-p3.heif"] {
            let base = try ColorSourcesTests.load(file)
            let nclx = try #require(base.range(of: Data("colrnclx".utf8))).upperBound
            for primaries in [0, 1, 2, 3, 9, 10, 11, 12, 22, 23, 255, 65535] {
                for transfer in [0, 1, 2, 3, 4, 8, 13, 16, 18, 19, 255, 65535] {
                    var data = base
                    data.replaceSubrange(nclx..<(nclx + 4), with: ExtremePNG.be16(UInt16(primaries)) + ExtremePNG.be16(UInt16(transfer)))
                    let image = try ImageCoderRegistry.default.decode(data)
                    #expect(image.pixelWidth == 64 && !image.repairs.contains(.damagedMetadata), "\(file) \(primaries)/\(transfer)")
                    let converts = [1, 2, 9, 11, 12, 22].contains(primaries) && [1, 2, 4, 8, 13, 16, 18].contains(transfer)
                        && !([1, 2].contains(primaries) && [1, 2, 13].contains(transfer))
                    #expect((image.sourceColorProfile != nil) == converts, "\(file) \(primaries)/\(transfer)")
                }
            }
        }
        // The mapping itself, for every pair of 16-bit-ish code points the loop above skipped.
        for primaries in 0...300 { for transfer in 0...40 { _ = ColorDescription.nclx(primaries: primaries, transfer: transfer) } }
    }

    /// BMP V5: profile offsets and sizes past the end, all-extreme endpoints and gammas.
    @Test func hostileBMPColourFieldsNeverTrap() throws {
        let base = try ColorSourcesTests.load("bmp-v5-adobe.bmp")
        func patched(_ fields: [(Int, UInt32)]) -> Data {
            var data = base
            for (offset, value) in fields {
                data.replaceSubrange((14 + offset)..<(14 + offset + 4), with: withUnsafeBytes(of: value.littleEndian) { Data($0) })
            }
            return data
        }
        let damaged = [
            patched([(112, UInt32.max)]), patched([(116, UInt32.max)]), patched([(112, 0), (116, 200)]),
            patched([(56, 0)] + (0..<9).map { (60 + 4 * $0, UInt32(bitPattern: Int32.min)) }),
            patched([(56, 0), (60, 1 << 30), (96, UInt32.max), (100, UInt32.max), (104, UInt32.max)]),
        ]
        for data in damaged {
            let image = try ImageCoderRegistry.default.decode(data)
            #expect(image.sourceColorProfile == nil && image.repairs.contains(.damagedMetadata) && image.pixelWidth == 64)
        }
        for kind: UInt32 in [0x7352_4742, 0x5769_6E20, 0x4C49_4E4B, 12345] {  // sRGB, Windows, linked, unknown
            let image = try ImageCoderRegistry.default.decode(patched([(56, kind)]))
            #expect(image.sourceColorProfile == nil && image.repairs.isEmpty)
        }
    }
}
