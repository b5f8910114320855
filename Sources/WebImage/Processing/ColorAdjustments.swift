extension ImageProcessors {
    /// Lays `color` over the image: each pixel's colour becomes
    /// `pixel × (1 − a) + color × a` with `a` the colour's alpha, and the pixel's own alpha is
    /// kept (transparent areas stay transparent). An opaque colour paints a silhouette; a
    /// translucent one tints. Identifier: `tint(ff000080)`.
    ///
    /// ```swift
    /// let reddened = try image.processed(by: [.tint(RGBAColor(red: 255, green: 0, blue: 0, alpha: 128))])
    /// ```
    public struct Tint: ImageProcessing, Hashable {
        public var color: RGBAColor

        public init(_ color: RGBAColor) { self.color = color }

        public var identifier: String { "tint(\(color.hex))" }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            // Premultiplied: out = p·(1 − a) + colour·a·α, with a and α (the pixel's alpha) in
            // 0...1; in integers, scaled by 255²: p·(255 − a)·255 + colour·a·α, rounded.
            let keep = UInt32(255 - color.alpha) * 255, a = UInt32(color.alpha)
            let paint = (UInt32(color.red) * a, UInt32(color.green) * a, UInt32(color.blue) * a)
            var pixels = image.packedPixels
            let row = image.pixelWidth * 4
            pixels.withUnsafeMutableBufferPointer { p in
                // A cancelled task stops between bands; its caller throws the pixels away.
                _ = PixelOperations.inRowBatches(rows: image.pixelHeight, bytesPerRow: row) { rows in
                    for i in stride(from: rows.lowerBound * row, to: rows.upperBound * row, by: 4) {
                        let alpha = UInt32(p[i + 3])
                        p[i] = UInt8(truncatingIfNeeded: (UInt32(p[i]) &* keep &+ paint.0 &* alpha &+ 32512) / 65025)
                        p[i + 1] = UInt8(truncatingIfNeeded: (UInt32(p[i + 1]) &* keep &+ paint.1 &* alpha &+ 32512) / 65025)
                        p[i + 2] = UInt8(truncatingIfNeeded: (UInt32(p[i + 2]) &* keep &+ paint.2 &* alpha &+ 32512) / 65025)
                    }
                }
            }
            return image.replacing(pixels: pixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: image.isOpaque)
        }
    }

    /// Turns the image grey with the ITU-R 601-2 luma, `L = 0.299 R + 0.587 G + 0.114 B`, in the
    /// same 16-bit fixed point as Pillow's `convert("L")`; alpha is kept. Identifier: `grayscale`.
    ///
    /// ```swift
    /// let grey = try image.processed(by: [.grayscale()])
    /// ```
    public struct Grayscale: ImageProcessing, Hashable {
        public init() {}

        public var identifier: String { "grayscale" }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            var pixels = image.packedPixels
            let row = image.pixelWidth * 4
            pixels.withUnsafeMutableBufferPointer { p in
                _ = PixelOperations.inRowBatches(rows: image.pixelHeight, bytesPerRow: row) { rows in
                    for i in stride(from: rows.lowerBound * row, to: rows.upperBound * row, by: 4) {
                        // Luma is linear, so it applies to premultiplied values as to straight ones.
                        let luma = (UInt32(p[i]) &* 19595 &+ UInt32(p[i + 1]) &* 38470 &+ UInt32(p[i + 2]) &* 7471 &+ 0x8000) >> 16
                        let l = UInt8(truncatingIfNeeded: min(luma, UInt32(p[i + 3])))
                        p[i] = l; p[i + 1] = l; p[i + 2] = l
                    }
                }
            }
            return image.replacing(pixels: pixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: image.isOpaque)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Tint {
    /// Lays `color` over the image, keeping its alpha.
    ///
    /// ```swift
    /// let sepiaish = try image.processed(by: [.grayscale(), .tint(RGBAColor(red: 112, green: 66, blue: 20, alpha: 90))])
    /// ```
    public static func tint(_ color: RGBAColor) -> Self { .init(color) }
}

extension ImageProcessing where Self == ImageProcessors.Grayscale {
    /// Greys the image (ITU-R 601-2 luma), keeping alpha.
    ///
    /// ```swift
    /// let grey = try image.processed(by: [.grayscale()])
    /// ```
    public static func grayscale() -> Self { .init() }
}
