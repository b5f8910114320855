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

    /// A lossy (`quality < 1`) or lossless WebP of the pattern.
    public static func webp(width: Int, height: Int, seed: UInt32 = 1, alpha: Bool = false, quality: Double = 0.8) throws -> Data {
        try WebPCoder().encode(pattern(width: width, height: height, seed: seed, alpha: alpha), as: .webp, quality: quality)
    }

    /// A lossy (`quality < 1`) or lossless AVIF of the pattern.
    public static func avif(width: Int, height: Int, seed: UInt32 = 1, alpha: Bool = false, quality: Double = 0.7) throws -> Data {
        try AVIFCoder().encode(pattern(width: width, height: height, seed: seed, alpha: alpha), as: .avif, quality: quality)
    }

    /// A lossy HEIC (HEVC through x265) of the pattern.
    public static func heic(width: Int, height: Int, seed: UInt32 = 1, alpha: Bool = false, quality: Double = 0.7) throws -> Data {
        try HEIFCoder().encode(pattern(width: width, height: height, seed: seed, alpha: alpha), as: .heic, quality: quality)
    }

    /// `count` frames of a bouncing square over the pattern: distinct frames, `delay` each.
    public static func animation(
        width: Int, height: Int, count: Int = 4, delay: Duration = .milliseconds(80), loopCount: Int = 0, alpha: Bool = false
    ) -> Image {
        let background = pattern(width: width, height: height, seed: 7, alpha: alpha)
        let side = max(1, min(width, height) / 4)
        let frames = (0..<count).map { n -> ImageFrame in
            var pixels = background.pixels
            let left = (width - side) * n / max(count - 1, 1), top = (height - side) * (count - 1 - n) / max(count - 1, 1)
            for y in top..<(top + side) {
                for x in left..<(left + side) {
                    let i = (y * width + x) * 4
                    pixels[i] = UInt8(40 * n % 256); pixels[i + 1] = 30; pixels[i + 2] = 200; pixels[i + 3] = 255
                }
            }
            return ImageFrame(pixels: pixels, duration: delay)
        }
        return Image(format: .gif, pixelWidth: width, pixelHeight: height, frames: frames, loopCount: loopCount)
    }

    /// An animated GIF of ``animation(width:height:count:delay:loopCount:alpha:)``.
    public static func gif(width: Int, height: Int, count: Int = 4) throws -> Data {
        try GIFCoder().encode(animation(width: width, height: height, count: count), as: .gif, quality: 1)
    }

    /// An animated lossless WebP of ``animation(width:height:count:delay:loopCount:alpha:)``.
    public static func animatedWebP(width: Int, height: Int, count: Int = 4) throws -> Data {
        try WebPCoder().encode(animation(width: width, height: height, count: count), as: .webp, quality: 1)
    }

    /// An animated PNG (APNG) of `count` frames.
    public static func animatedPNG(width: Int, height: Int, count: Int = 4) throws -> Data {
        try APNGCoder().encode(animation(width: width, height: height, count: count), as: .apng, quality: 1)
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
        set["spinner.gif"] = try gif(width: 96, height: 96, count: 6)
        set["photo.webp"] = try webp(width: 640, height: 480, seed: 8)
        set["badge.webp"] = try webp(width: 128, height: 128, seed: 9, alpha: true, quality: 1)
        set["bounce.webp"] = try animatedWebP(width: 120, height: 90, count: 5)
        set["bounce.png"] = try animatedPNG(width: 120, height: 90, count: 5)
        set["photo.avif"] = try avif(width: 320, height: 240, seed: 10)
        set["photo.heic"] = try heic(width: 320, height: 240, seed: 11)
        for n in 1...12 { set["thumb-\(n).jpg"] = try jpeg(width: 160 + n * 8, height: 120, seed: UInt32(10 + n)) }
        return set
    }
}
