extension ImageProcessors {
    /// Lays the image over an opaque `background` colour (its alpha is ignored): the result is
    /// opaque. What a server does before writing a format without alpha (JPEG), so transparent
    /// areas show the colour asked for instead of black (premultiplied pixels with their alpha
    /// dropped). Identifier: `flatten(ffffff)`.
    ///
    /// ```swift
    /// let onWhite = try logo.processed(by: [.flatten(.white)])
    /// ```
    public struct Flatten: ImageProcessing, Hashable {
        public var background: RGBAColor

        public init(_ background: RGBAColor) { self.background = background }

        public var identifier: String { "flatten(\(background.hex.prefix(6)))" }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            var pixels = image.packedPixels
            if !image.isOpaque {
                // Premultiplied: out = p + colour·(255 − α)/255, rounded.
                let colour = (UInt32(background.red), UInt32(background.green), UInt32(background.blue))
                let row = image.pixelWidth * 4
                pixels.withUnsafeMutableBufferPointer { p in
                    // A cancelled task stops between bands; its caller throws the pixels away.
                    _ = PixelOperations.inRowBatches(rows: image.pixelHeight, bytesPerRow: row) { rows in
                        for i in stride(from: rows.lowerBound * row, to: rows.upperBound * row, by: 4) where p[i + 3] != 255 {
                            let rest = 255 - UInt32(p[i + 3])
                            p[i] = UInt8(truncatingIfNeeded: min(255, UInt32(p[i]) + (colour.0 * rest + 127) / 255))
                            p[i + 1] = UInt8(truncatingIfNeeded: min(255, UInt32(p[i + 1]) + (colour.1 * rest + 127) / 255))
                            p[i + 2] = UInt8(truncatingIfNeeded: min(255, UInt32(p[i + 2]) + (colour.2 * rest + 127) / 255))
                            p[i + 3] = 255
                        }
                    }
                }
            }
            return image.replacing(pixels: pixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: true)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Flatten {
    /// The image over an opaque `background`.
    ///
    /// ```swift
    /// let jpegReady = try logo.processed(by: [.flatten(RGBAColor(red: 240, green: 240, blue: 240))])
    /// ```
    public static func flatten(_ background: RGBAColor) -> Self { .init(background) }
}
