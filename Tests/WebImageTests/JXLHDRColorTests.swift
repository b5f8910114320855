import Foundation
import Testing
import WebImage

/// A JPEG XL with a PQ (BT.2100) colour encoding is tone-mapped to SDR like an AVIF with the same
/// `nclx`, instead of going through libjxl's ICC (10,000 nits at white: a dark picture).
/// `Fixtures/color/hdr/pq-grey-patches.jxl` (scripts/fixtures/make-hdr-jxl-fixture.py): cjxl 0.7 `-d 0 -x color_space=RGB_D65_202_Rel_PeQ` of a
/// 16-bit PNG of seven grey patches at 0, 10, 100, 203, 1,000, 4,000 and 10,000 nits (PQ signal
/// from ST 2084). The references are computed here from the definitions (ST 2084's EOTF, reference
/// white 203 nits, extended Reinhard to 1,000 nits, the sRGB curve) from the stored 8-bit signal.
@Suite("Colour management: JPEG XL HDR")
struct JXLHDRColorTests {
    static func pqNits(_ signal: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(signal, 1 / m2)
        return 10_000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    static func expected(signal: UInt8) -> Double {
        let l = pqNits(Double(signal) / 255) / 203, w = 1000.0 / 203
        let linear = min(l * (1 + l / (w * w)) / (1 + l), 1)
        let encoded = linear <= 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
        return encoded * 255
    }

    @Test func pqIsToneMappedLikeAVIF() throws {
        let data = try ColorManagementTests.load("hdr/pq-grey-patches.jxl")
        var ignore = ImageDecodingOptions.default
        ignore.colorHandling = .ignore
        let stored = try ImageCoderRegistry.default.decode(data, options: ignore)
        let image = try ImageCoderRegistry.default.decode(data)
        #expect(image.sourceColorProfile?.description.contains("nclx 9/16") == true, "\(String(describing: image.sourceColorProfile?.description))")
        var previous = -1
        for patch in 0..<7 {
            let x = patch * 256 / 7 + 18
            let signal = stored.pixel(x: x, y: 8).r, out = image.pixel(x: x, y: 8)
            #expect(abs(Int(out.r) - Int(out.g)) <= 1 && abs(Int(out.g) - Int(out.b)) <= 1, "grey stays grey: \(out)")
            let reference = Self.expected(signal: signal)
            #expect(abs(Double(out.g) - reference) <= 3, "patch \(patch), signal \(signal): \(out.g), expected \(reference)")
            #expect(Int(out.g) >= previous)
            previous = Int(out.g)
        }
        // Reference white (203 nits) is a light grey, not the 39 of 255 libjxl's ICC gave.
        #expect(image.pixel(x: 3 * 256 / 7 + 18, y: 8).g > 150)
    }
}
