public import Foundation
public import WebImage

/// Deterministic sample images, generated and encoded with WebImage's own coders.
///
/// The pattern — gradients plus a little hashed noise — compresses like a photo, so JPEG
/// sizes and decode times are realistic, and the same seed always gives the same bytes.
///
/// ```swift
/// let jpeg = try SampleImages.jpeg(width: 1000, height: 1000)
/// ```
public enum SampleImages {
    /// An RGBA pattern; with `alpha`, a radial transparency ramp.
    public static func pattern(width: Int, height: Int, seed: UInt32 = 1, alpha: Bool = false) -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        let cx = Double(width) / 2, cy = Double(height) / 2
        let radius = max(cx, cy)
        for y in 0..<height {
            for x in 0..<width {
                var h = UInt32(truncatingIfNeeded: x &* 73_856_093) ^ UInt32(truncatingIfNeeded: y &* 19_349_663) ^ seed &* 83_492_791
                h = (h ^ (h >> 13)) &* 0x5bd1_e995
                let noise = Int(h >> 28)  // 0...15
                let i = (y * width + x) * 4
                pixels[i] = UInt8(clamping: x * 255 / max(width - 1, 1) + noise - 8)
                pixels[i + 1] = UInt8(clamping: y * 255 / max(height - 1, 1) + noise - 8)
                pixels[i + 2] = UInt8(clamping: Int(seed % 7) * 36 + (x ^ y) % 32)
                if alpha {
                    let d = ((Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy)).squareRoot()
                    let a = UInt32(max(0, min(255, 255 - d / radius * 255)))
                    pixels[i + 3] = UInt8(a)
                    for c in 0..<3 { pixels[i + c] = UInt8((UInt32(pixels[i + c]) * a + 127) / 255) }
                }
            }
        }
        return Image(format: .png, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: !alpha)
    }

    public static func jpeg(width: Int, height: Int, seed: UInt32 = 1, quality: Double = 0.85) throws -> Data {
        try JPEGCoder().encode(pattern(width: width, height: height, seed: seed), as: .jpeg, quality: quality)
    }

    public static func png(width: Int, height: Int, seed: UInt32 = 1, alpha: Bool = true) throws -> Data {
        try PNGCoder().encode(pattern(width: width, height: height, seed: seed, alpha: alpha), as: .png, quality: 1)
    }

    /// The set the demo and the tests serve, by file name.
    public static func standardSet() throws -> [String: Data] {
        var set: [String: Data] = [:]
        set["photo.jpg"] = try jpeg(width: 1000, height: 1000, seed: 1)
        set["landscape.jpg"] = try jpeg(width: 1600, height: 900, seed: 2)
        set["small.jpg"] = try jpeg(width: 120, height: 80, seed: 3)
        set["logo.png"] = try png(width: 256, height: 256, seed: 4)
        set["icon@2x.png"] = try png(width: 64, height: 64, seed: 5)
        set["opaque.png"] = try png(width: 400, height: 300, seed: 6, alpha: false)
        for n in 1...12 { set["thumb-\(n).jpg"] = try jpeg(width: 160 + n * 8, height: 120, seed: UInt32(10 + n)) }
        return set
    }
}
