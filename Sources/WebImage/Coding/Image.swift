/// A decoded image: pixels in memory, ready to transform, encode or hand to a renderer.
///
/// ## Pixel layout
/// `pixels` holds `pixelHeight` rows of `bytesPerRow` bytes, top row first. Each pixel is
/// four bytes, **R, G, B, A**, 8 bits each, with colour **premultiplied** by alpha (the layout
/// CoreGraphics, Skia and Cairo composite fastest). Opaque images have A = 255 everywhere and
/// ``isOpaque`` set. EXIF orientation is reported in ``orientation``, not applied.
///
/// ```swift
/// let image = try ImageCoderRegistry.default.decode(data)
/// print(image.format, image.pixelWidth, image.pixelHeight, image.cost)
/// ```
public struct Image: Sendable {
    /// The format the image was decoded from.
    public var format: ImageFormat
    /// Width in pixels.
    public var pixelWidth: Int
    /// Height in pixels.
    public var pixelHeight: Int
    /// Bytes per row of ``pixels`` (at least `4 * pixelWidth`).
    public var bytesPerRow: Int
    /// Premultiplied RGBA8 pixels, `bytesPerRow * pixelHeight` bytes.
    public var pixels: [UInt8]
    /// `true` when every pixel has alpha 255.
    public var isOpaque: Bool
    /// Points-to-pixels scale, read from `@2x` / `@3x` in the key when the pipeline decodes.
    public var scale: Double
    /// EXIF orientation (1–8) as stored in the file; 1 means "as stored".
    public var orientation: Int
    /// Number of frames in the source (1 for still images).
    public var frameCount: Int

    public init(
        format: ImageFormat,
        pixelWidth: Int,
        pixelHeight: Int,
        bytesPerRow: Int? = nil,
        pixels: [UInt8],
        isOpaque: Bool,
        scale: Double = 1,
        orientation: Int = 1,
        frameCount: Int = 1
    ) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.bytesPerRow = bytesPerRow ?? pixelWidth * 4
        self.pixels = pixels
        self.isOpaque = isOpaque
        self.scale = scale
        self.orientation = orientation
        self.frameCount = frameCount
    }

    /// Size in points: pixel size divided by ``scale``.
    public var size: (width: Double, height: Double) {
        (Double(pixelWidth) / scale, Double(pixelHeight) / scale)
    }

    /// Bytes of memory this image holds; the memory cache's cost.
    public var cost: Int { pixels.count }

    /// The RGBA value of one pixel (premultiplied), for tests and tools.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(x >= 0 && x < pixelWidth && y >= 0 && y < pixelHeight, "pixel out of bounds")
        let i = y * bytesPerRow + x * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }
}

extension Image {
    /// Reads the scale factor SDWebImage-style from a key or file name: `icon@2x.png` → 2.
    public static func scaleFactor(forKey key: String) -> Double {
        let name = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
        let last = name.split(separator: "/").last.map(String.init) ?? name
        for factor in [3, 2] where last.contains("@\(factor)x.") || last.hasSuffix("@\(factor)x") {
            return Double(factor)
        }
        return 1
    }
}
