extension Image {
    /// The side ``blurHash(components:)`` scales the image down to first: BlurHash's cost grows
    /// with pixels × components, and 64 pixels keep every component it can hold.
    public static let blurHashSampleSide = 64

    /// The image's BlurHash with `components.x × components.y` components (each 1…9; 4 × 3 is
    /// the common choice), computed on a copy scaled to fit ``blurHashSampleSide`` pixels a side
    /// and turned upright. Alpha is ignored (colours are unpremultiplied first); an animation is
    /// hashed by its first frame. Colours are hashed as stored: sRGB unless the decode kept a profile.
    ///
    /// ```swift
    /// let hash = try image.blurHash(components: (x: 4, y: 3))
    /// print(hash.string)  // 28 characters for 4 × 3, e.g. "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
    /// ```
    public func blurHash(components: (x: Int, y: Int) = (4, 3)) throws(PlaceholderError) -> BlurHash {
        guard (1...9).contains(components.x), (1...9).contains(components.y) else {
            throw .invalidComponents(x: components.x, y: components.y)
        }
        let sample = try placeholderSample(maxSide: Self.blurHashSampleSide)
        return try BlurHash(rgba: PixelOperations.unpremultiplied(sample), width: sample.pixelWidth,
                            height: sample.pixelHeight, components: components)
    }

    /// The image's ThumbHash, computed on a copy scaled to fit ``ThumbHash/maxEncodedSide``
    /// (100) pixels a side and turned upright; an animation is hashed by its first frame.
    ///
    /// ```swift
    /// let hash = try image.thumbHash()
    /// print(hash.base64String, hash.averageColor.hex)
    /// ```
    public func thumbHash() throws(PlaceholderError) -> ThumbHash {
        let sample = try placeholderSample(maxSide: ThumbHash.maxEncodedSide)
        return try ThumbHash(rgba: PixelOperations.unpremultiplied(sample), width: sample.pixelWidth, height: sample.pixelHeight)
    }

    /// The first frame, scaled down (area averaging, ``Resampler``) to fit `maxSide` and oriented:
    /// the pixels a placeholder hash is computed on.
    func placeholderSample(maxSide: Int) throws(PlaceholderError) -> Image {
        if let problem = bufferProblem { throw .unusableImage(problem) }
        let still = Image(format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, bytesPerRow: bytesPerRow,
                          pixels: pixels, isOpaque: isOpaque, orientation: orientation)
        return still.resized(toFitWidth: maxSide, height: maxSide).oriented()
    }
}
