import CColorKernel
import CLcms2
import Foundation
import Testing
@testable import WebImage

/// The vectorised matrix-and-curve kernels (`VectorMatrixShaper`: AVX-512 and AVX2) and the
/// scalar tables against LittleCMS on every 8-bit colour, the kernels' sRGB encode against the
/// exact curve, and their row tails and unaligned rows. A kernel this CPU lacks is asked for
/// too: the conversion must then fall back (and is still checked).
@Suite("Colour vector kernel", .cpuBound)
struct ColorVectorKernelTests {
    typealias Kernel = VectorMatrixShaper.Kernel

    /// `body` gets the profile `name` and LittleCMS's built-in sRGB profile.
    static func withProfiles<Result>(_ name: String, _ body: (cmsHPROFILE, cmsHPROFILE) -> Result) throws -> Result {
        let context = ColorContext()
        let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/\(name).icc"))
        let sRGB = try #require(context.sRGB())
        defer { cmsCloseProfile(sRGB) }
        return try #require(context.withProfile(data) { body($0, sRGB) })
    }

    /// What a conversion asked for `kernel` runs: that kernel where the CPU has it (or a better
    /// one), else a lesser one, else the scalar tables.
    static func expected(_ kernel: Kernel?) -> Kernel? {
        guard let kernel, let best = Kernel.best else { return nil }
        return min(kernel, best)
    }

    static func conversion(_ name: String, _ kernel: Kernel?) throws -> MatrixShaperConversion {
        let built = try #require(try withProfiles(name) { MatrixShaperConversion(source: $0, sRGB: $1, kernel: kernel) })
        #expect(built.kernel == expected(kernel))
        return built
    }

    /// All 2^24 colours (alpha a pattern of its own) through each kernel, against LittleCMS's
    /// transform of the same pixels.
    @Test(arguments: [("AdobeRGB1998", .avx512), ("AdobeRGB1998", .avx2), ("AdobeRGB1998", nil), ("ProPhotoRGB", .avx512), ("ProPhotoRGB", .avx2)] as [(String, Kernel?)])
    func everyColourWithinOneLevelOfLittleCMS(_ name: String, _ kernel: Kernel?) throws {
        let conversion = try Self.conversion(name, kernel)
        let transform = try #require(ColorTransforms.shared.transform(from: try ColorFastPathTests.profile(name), layout: .opaqueRGBA))
        let width = 4096, rows = 4096
        var source = [UInt8](repeating: 0, count: 4 * width * rows)
        source.withUnsafeMutableBufferPointer { pixels in
            for index in 0..<(width * rows) {
                pixels[4 * index] = UInt8(truncatingIfNeeded: index)
                pixels[4 * index + 1] = UInt8(truncatingIfNeeded: index >> 8)
                pixels[4 * index + 2] = UInt8(truncatingIfNeeded: index >> 16)
                pixels[4 * index + 3] = UInt8(truncatingIfNeeded: index &* 7)
            }
        }
        var fast = source, reference = source
        fast.withUnsafeMutableBytes { conversion.convert($0.baseAddress!, stride: 4 * width, width: width, rows: rows) }
        // Into another buffer: LittleCMS's own pipeline.
        source.withUnsafeBytes { input in
            reference.withUnsafeMutableBytes { transform.convert(input.baseAddress!, inputStride: 4 * width, to: $0.baseAddress!, outputStride: 4 * width, width: width, rows: rows) }
        }
        var largest = 0, total = 0, alphaChanged = 0
        fast.withUnsafeBufferPointer { fast in
            source.withUnsafeBufferPointer { source in
                reference.withUnsafeBufferPointer { reference in
                    for index in 0..<(width * rows) {
                        for channel in 0..<3 {
                            let difference = abs(Int(fast[4 * index + channel]) - Int(reference[4 * index + channel]))
                            largest = max(largest, difference)
                            total += difference
                        }
                        if fast[4 * index + 3] != source[4 * index + 3] { alphaChanged += 1 }
                    }
                }
            }
        }
        let mean = Double(total) / Double(3 * width * rows)
        #expect(largest <= 1 && mean < 0.03, "\(name), \(String(describing: kernel)): largest difference \(largest), mean \(mean)")
        #expect(alphaChanged == 0)
    }

    /// Decoding takes the best kernel for every standard profile (the polynomial's check against
    /// the sRGB profile's own curve passes).
    @Test(arguments: ColorFastPathTests.profiles)
    func decodingTakesTheBestKernel(_ name: String) throws {
        #expect(try Self.conversion(name, Kernel.best).kernel == Kernel.best)
    }

    /// Each kernel's sRGB encode (the polynomial) on 2^20 + 1 even steps of [0, 1] and every
    /// 16-bit linear value: within 0.55 of a level of the exact curve (so at most one level
    /// from its rounding), and values outside [0, 1] clipped.
    @Test(arguments: [Kernel.avx512, .avx2])
    func encodeFollowsTheExactCurve(_ kernel: Kernel) throws {
        guard let runs = Self.expected(kernel) else {
            // Nothing to encode with: the conversion must then keep to the scalar tables.
            #expect(try Self.conversion("AdobeRGB1998", kernel).kernel == nil)
            return
        }
        let even: [Float] = (0...(1 << 20)).map { (step: Int) -> Float in Float(step) / 1_048_576 }
        let words: [Float] = (0...65535).map { (word: Int) -> Float in Float(word) / 65535 }
        let steps: [Float] = even + words
        var levels = [UInt8](repeating: 0, count: steps.count)
        webimage_color_encode(runs.rawValue, steps, &levels, steps.count)
        var worst = 0.0
        for (value, level) in zip(steps, levels) {
            let linear = Double(value)
            let encoded: Double = linear < 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
            let exact: Double = 255 * encoded
            worst = max(worst, abs(Double(level) - exact))
        }
        #expect(worst < 0.55, "\(runs): largest distance from the exact curve \(worst) of a level")
        let outside: [Float] = [-1e-30, -0.5, -100, 1.0001, 1.5, 3, 100, 191, -0.0]
        let clippedLevels: [UInt8] = [0, 0, 0, 255, 255, 255, 255, 255, 0]
        var clipped = [UInt8](repeating: 7, count: outside.count)
        webimage_color_encode(runs.rawValue, outside, &clipped, outside.count)
        #expect(clipped == clippedLevels)
    }

    /// Rows of every width from 1 to 200 pixels, starting at every byte offset, convert each pixel
    /// as the same pixel inside one long row does (a kernel's last partial block goes through a
    /// stack buffer), and write nothing outside the row.
    @Test(arguments: [Kernel.avx512, .avx2])
    func tailsAndUnalignedRows(_ kernel: Kernel) throws {
        let conversion = try Self.conversion("AdobeRGB1998", kernel)
        let probe = ColorFastPathTests.probe(count: 200)
        var whole = probe
        whole.withUnsafeMutableBytes { conversion.convert($0.baseAddress!, stride: 800, width: 200, rows: 1) }
        #expect(whole != probe)
        // The scalar tables read whole 32-bit words: they need rows at multiples of 4 bytes.
        let offsets = conversion.kernel == nil ? [0] : Array(0..<4)
        var mismatches: [String] = []
        for offset in offsets {
            for width in 1...200 {
                var buffer = [UInt8](repeating: 0xA5, count: offset + 4 * width + 8)
                buffer.replaceSubrange(offset..<(offset + 4 * width), with: probe[0..<(4 * width)])
                buffer.withUnsafeMutableBytes { conversion.convert($0.baseAddress! + offset, stride: 4 * width, width: width, rows: 1) }
                let end = offset + 4 * width
                let converted: [UInt8] = Array(buffer[offset..<end]), expected: [UInt8] = Array(whole[0..<(4 * width)])
                let before: Bool = buffer[0..<offset].allSatisfy { $0 == 0xA5 }, after: Bool = buffer[end...].allSatisfy { $0 == 0xA5 }
                if converted != expected || !before || !after { mismatches.append("offset \(offset), width \(width)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
