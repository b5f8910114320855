import Foundation
import WebImage
import WebImageOrigin

/// A photo-like JPEG XL big enough to decode for a few hundred ms: `SampleImages.pattern` (noise
/// over gradients) at 3000 × 3000, written by cjxl 0.7 (libjxl-tools, installed by
/// `scripts/setup`) at distance 1, effort 3: about 0.9 MB, some 15 of the decoder's 64 KB pieces.
/// Made once per test process (cjxl takes a second or two); the project has no JPEG XL encoder.
enum LargeJXL {
    static let side = 3000

    static let photo = Task { try await make(side: side) }

    struct EncoderFailed: Error, CustomStringConvertible {
        var description: String
    }

    static func make(side: Int) async throws -> Data {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/cjxl") else {
            throw EncoderFailed(description: "cjxl is missing: run ./scripts/setup (libjxl-tools)")
        }
        let image = SampleImages.pattern(width: side, height: side, seed: 4)
        // Binary PPM: the RGB of the opaque pattern.
        var ppm = Data("P6\n\(side) \(side)\n255\n".utf8)
        var rgb = [UInt8](repeating: 0, count: side * side * 3)
        image.pixels.withUnsafeBufferPointer { rgba in
            for pixel in 0..<(side * side) {
                rgb[3 * pixel] = rgba[4 * pixel]
                rgb[3 * pixel + 1] = rgba[4 * pixel + 1]
                rgb[3 * pixel + 2] = rgba[4 * pixel + 2]
            }
        }
        ppm.append(contentsOf: rgb)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-jxl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("photo.ppm"), output = directory.appendingPathComponent("photo.jxl")
        try ppm.write(to: input)
        let result = try await WebImageCommand.run(
            ["cjxl", input.path, output.path, "-d", "1", "-e", "3"], program: URL(fileURLWithPath: "/usr/bin/env"))
        guard result.status == 0 else { throw EncoderFailed(description: "cjxl failed (\(result.status)): \(result.stderr)") }
        return try Data(contentsOf: output)
    }
}
