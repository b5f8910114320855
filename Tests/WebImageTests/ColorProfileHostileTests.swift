import Foundation
import Testing
import WebImage

/// Broken and hostile colour information never breaks a decode: the profile is ignored, the
/// image decodes as untagged sRGB, and ``ImageRepairs/damagedMetadata`` says so. The files are
/// written by `scripts/fixtures/make-color-fixtures.py` (`Fixtures/color/hostile`).
@Suite("Colour management: hostile profiles", .cpuBound)
struct ColorProfileHostileTests {
    static func load(_ name: String) throws -> Data {
        try Data(contentsOf: ColorManagementTests.directory.appendingPathComponent("hostile/\(name)"))
    }

    @Test(arguments: ["iccp-bomb.png", "iccp-truncated.png", "icc-garbage.jpg", "icc-part-missing.jpg", "iccp-garbage.webp"])
    func damagedProfileIsIgnored(_ name: String) throws {
        let cpu = ThreadCPUClock.current(), start = cpu.used
        let image = try ImageCoderRegistry.default.decode(try Self.load(name))
        #expect(image.sourceColorProfile == nil)
        #expect(image.colorProfile == nil)
        #expect(image.repairs.contains(.damagedMetadata), "\(name): \(image.repairs)")
        #expect(image.pixelWidth == 16 && image.pixelHeight == 12)
        // The bomb stops at the 16 MiB profile limit instead of inflating 256 MiB (this thread's
        // CPU time, which a loaded machine does not stretch).
        #expect(cpu.used - start < .seconds(5))
    }

    /// The same profile, whole, over two APP2 markers: reassembled in order.
    @Test func profileSplitOverTwoMarkersIsReassembled() throws {
        let image = try ImageCoderRegistry.default.decode(try Self.load("icc-two-parts.jpg"))
        let profile = try #require(image.sourceColorProfile)
        #expect(profile.data.count > 65_519)
        #expect(profile.description.contains("Adobe RGB"))
        #expect(image.repairs.isEmpty)
    }

    @Test func bytesThatAreNotAProfileAreRefused() {
        #expect(ColorProfile(iccData: Data()) == nil)
        #expect(ColorProfile(iccData: Data(repeating: 0xFF, count: 4096)) == nil)
        var header = Data(count: 132)
        header[3] = 132
        header[16] = 0x52; header[17] = 0x47; header[18] = 0x42; header[19] = 0x20  // an RGB profile…
        header[36] = 0x61; header[37] = 0x63; header[38] = 0x73; header[39] = 0x70  // …"acsp", with no tags
        #expect(ColorProfile(iccData: header) == nil)
    }

    /// Arbitrary bytes in each container's profile field: never a trap, always a decode.
    @Test func randomProfileBytesNeverBreakADecode() throws {
        var random = SplitMix(seed: 0x1CC)
        let base = try Data(contentsOf: ColorManagementTests.directory.appendingPathComponent("adobe-rgb.jpg"))
        let marker = try #require(base.range(of: Data("ICC_PROFILE".utf8)))
        for _ in 0..<200 {
            var mutated = base
            for _ in 0..<8 {
                let at = marker.lowerBound + 12 + Int(random.next() % 560)
                mutated[at] = UInt8(truncatingIfNeeded: random.next())
            }
            let image = try ImageCoderRegistry.default.decode(mutated)
            #expect(image.pixelWidth == 64)
        }
    }
}
