import Foundation
import Testing
@testable import WebImage

/// An ICC profile's stages are limited before LittleCMS opens it (red team, stop 51): a D2B0
/// `mpet` tag of 10,000 stages that all point at one matrix (8 bytes a stage) made a 1 × 1 image
/// cost 4 s of CPU in its header read — 100,000 stages more than a minute — inside LittleCMS,
/// which no deadline stops. Over the limit the profile is ignored, as a damaged one is.
@Suite("Colour management: profiles with too many stages", .cpuBound)
struct ColorProfileStageLimitTests {
    static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func s15(_ value: Double) -> [UInt8] { be32(Int((value * 65_536).rounded())) }

    /// A v4 RGB display profile: description, white point, an identity `mft2` A2B0, and a D2B0
    /// `mpet` of `stages` identity 3 × 3 matrices, every position pointing at one element.
    static func profile(stages: Int) -> Data {
        let identity = [1.0, 0, 0, 0, 1, 0, 0, 0, 1]
        let text = Array("stages".utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let desc = Array("mluc".utf8) + [0, 0, 0, 0] + be32(1) + be32(12) + Array("enUS".utf8) + be32(text.count) + be32(28) + text
        let white = Array("XYZ ".utf8) + [0, 0, 0, 0] + s15(0.9642) + s15(1.0) + s15(0.8249)
        let ends: [UInt8] = [0, 0, 0xFF, 0xFF] + [0, 0, 0xFF, 0xFF] + [0, 0, 0xFF, 0xFF]
        var lut = Array("mft2".utf8) + [0, 0, 0, 0, 3, 3, 2, 0] + identity.flatMap(s15) + [0, 2, 0, 2] + ends
        for r in [0, 0xFFFF] { for g in [0, 0xFFFF] { for b in [0, 0xFFFF] { lut += [r, g, b].flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } } } }
        lut += ends
        var element = Array("matf".utf8) + [0, 0, 0, 0, 0, 3, 0, 3]
        for value in identity + [0, 0, 0] { element += be32(Int(Float(value).bitPattern)) }
        var mpet = Array("mpet".utf8) + [0, 0, 0, 0, 0, 3, 0, 3] + be32(stages)
        for _ in 0..<stages { mpet += be32(16 + 8 * stages) + be32(element.count) }
        mpet += element
        let tags: [(String, [UInt8])] = [("desc", desc), ("wtpt", white), ("A2B0", lut), ("D2B0", mpet)]
        var table = be32(tags.count), body: [UInt8] = []
        let start = 128 + 4 + 12 * tags.count
        for (signature, data) in tags {
            while body.count % 4 != 0 { body.append(0) }
            table += Array(signature.utf8) + be32(start + body.count) + be32(data.count)
            body += data
        }
        var header = be32(128 + table.count + body.count) + Array("lcms".utf8) + be32(0x0430_0000)
        header += Array("mntr".utf8) + Array("RGB ".utf8) + Array("XYZ ".utf8) + [UInt8](repeating: 0, count: 12)
        header += Array("acsp".utf8) + Array("APPL".utf8) + [UInt8](repeating: 0, count: 24)
        header += s15(0.9642) + s15(1.0) + s15(0.8249) + Array("lcms".utf8) + [UInt8](repeating: 0, count: 44)
        return Data(header + table + body)
    }

    /// A 1 × 1 JPEG carrying `icc` in one APP2 `ICC_PROFILE` segment.
    static func jpeg(with icc: Data) throws -> Data {
        let plain = try JPEGCoder().encode(Image(format: .jpeg, pixelWidth: 1, pixelHeight: 1, pixels: [200, 30, 30, 255], isOpaque: true), as: .jpeg, quality: 0.9)
        let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + Array(icc)
        let segment: [UInt8] = [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        return plain.prefix(2) + Data(segment) + plain.dropFirst(2)
    }

    @Test func aProfileOfTooManyStagesIsIgnoredAtOnce() throws {
        let file = try Self.jpeg(with: Self.profile(stages: 7_000))  // one APP2 segment: 56 KB
        let cpu = ThreadCPUClock.current(), start = cpu.used
        let properties = try ImageProperties.read(from: file)
        let image = try ImageCoderRegistry.default.decode(file)
        let spent = cpu.used - start
        #expect(spent < .seconds(1), "header and decode took \(spent) of CPU")
        #expect(properties.header.pixelWidth == 1 && image.sourceColorProfile == nil)
        #expect(image.repairs.contains(.damagedMetadata), "\(image.repairs)")
    }

    @Test func aProfileOfAFewStagesIsUsed() throws {
        #expect(ICCProfileLimits.allows(Self.profile(stages: 3)))
        #expect(!ICCProfileLimits.allows(Self.profile(stages: ICCProfileLimits.maxStages + 1)))
        let image = try ImageCoderRegistry.default.decode(try Self.jpeg(with: Self.profile(stages: 3)))
        #expect(image.sourceColorProfile?.description == "stages", "the profile within the limits was not used")
    }

    /// The check itself stays small whatever the offsets share: a curve set declaring 65,535
    /// curves (one a channel; LittleCMS takes 16) is refused without walking them.
    @Test func aStageOfTooManyCurvesIsRefusedAtOnce() {
        var icc = [UInt8](Self.profile(stages: 1))
        // Turn the one `matf` stage into a `cvst` of 65,535 channels.
        let at = icc.count - 60  // the element is the file's last 60 bytes
        #expect(Array(icc[at..<(at + 4)]) == Array("matf".utf8))
        icc.replaceSubrange(at..<(at + 4), with: Array("cvst".utf8))
        icc[at + 8] = 0xFF
        icc[at + 9] = 0xFF
        #expect(!ICCProfileLimits.allows(Data(icc)))
    }
}
