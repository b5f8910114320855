import Foundation
import Testing
@testable import WebImage

/// The matrix-and-curve fast path (`MatrixShaperConversion`) against LittleCMS's own transform of
/// the same profile, and the conversion of large images in bands of rows (one per core) against
/// the same pixels converted a row at a time.
@Suite("Colour fast path", .cpuBound)
struct ColorFastPathTests {
    static let profiles = ["AdobeRGB1998", "ProPhotoRGB", "WideGamutRGB", "AppleRGB", "Rec709", "SwappedRedAndGreen"]

    static func profile(_ name: String) throws -> ColorProfile {
        try #require(ColorProfile(iccData: try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/\(name).icc"))))
    }

    /// Opaque RGBA pixels: every grey, the primaries and secondaries at every level, then noise.
    static func probe(count: Int) -> [UInt8] {
        var pixels: [UInt8] = []
        for level in 0...255 {
            let v = UInt8(level)
            pixels += [v, v, v, 255, v, 0, 0, 255, 0, v, 0, 255, 0, 0, v, 255, v, v, 0, 255, 0, v, v, 255]
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        while pixels.count < 4 * count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            pixels += [UInt8(truncatingIfNeeded: state >> 24), UInt8(truncatingIfNeeded: state >> 40), UInt8(truncatingIfNeeded: state >> 56), 255]
        }
        return pixels
    }

    @Test(arguments: profiles)
    func fastPathMatchesLittleCMS(_ name: String) throws {
        let transform = try #require(ColorTransforms.shared.transform(from: try Self.profile(name), layout: .opaqueRGBA))
        let source = Self.probe(count: 8192)
        let width = source.count / 4
        // In place: the fast path. Into another buffer: LittleCMS's pipeline.
        var fast = source, reference = source
        fast.withUnsafeMutableBytes { transform.convert($0.baseAddress!, inputStride: 4 * width, to: $0.baseAddress!, outputStride: 4 * width, width: width, rows: 1) }
        source.withUnsafeBytes { input in
            reference.withUnsafeMutableBytes { transform.convert(input.baseAddress!, inputStride: 4 * width, to: $0.baseAddress!, outputStride: 4 * width, width: width, rows: 1) }
        }
        let differences = zip(fast, reference).map { abs(Int($0) - Int($1)) }
        let mean = Double(differences.reduce(0, +)) / Double(3 * width)
        #expect(differences.max()! <= 1 && mean <= 0.05, "\(name): largest difference \(differences.max()!), mean \(mean)")
        #expect(stride(from: 3, to: fast.count, by: 4).allSatisfy { fast[$0] == 255 }, "alpha kept")
    }

    /// Above a megapixel the rows are split between cores: every row is converted exactly once,
    /// for the fast path (opaque) and for LittleCMS (premultiplied), with an odd number of rows
    /// and a stride wider than the pixels.
    @Test(arguments: [ColorTransforms.Layout.opaqueRGBA, .premultipliedRGBA])
    func bandsConvertEveryRowOnce(_ layout: ColorTransforms.Layout) throws {
        let transform = try #require(ColorTransforms.shared.transform(from: try Self.profile("AdobeRGB1998"), layout: layout))
        let width = 1021, rows = 1031, stride = 4 * width + 12
        #expect(ColorTransform.bands(width: width, rows: rows) == min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8))
        let noise = Self.probe(count: width * rows)
        var image = [UInt8](repeating: 0, count: stride * rows)
        for row in 0..<rows {
            for x in 0..<(4 * width) {
                let byte = noise[(row * 4 * width + x)]
                image[row * stride + x] = layout == .opaqueRGBA || x % 4 == 3 ? byte : min(byte, noise[row * 4 * width + x | 3])
            }
        }
        var whole = image, byRow = image
        whole.withUnsafeMutableBytes { transform.convert($0.baseAddress!, inputStride: stride, to: $0.baseAddress!, outputStride: stride, width: width, rows: rows) }
        byRow.withUnsafeMutableBytes { buffer in
            for row in 0..<rows {
                let line = buffer.baseAddress! + row * stride
                transform.convert(line, inputStride: stride, to: line, outputStride: stride, width: width, rows: 1)
            }
        }
        #expect(whole == byRow)
        #expect(whole != image)
        // The padding after each row's pixels is never written.
        #expect((0..<rows).allSatisfy { row in whole[(row * stride + 4 * width)..<((row + 1) * stride)].allSatisfy { $0 == 0 } })
    }
}
