extension Image {
    /// An image known only from its header: format, size and frame count, no pixels. What the
    /// pipeline delivers for ``ImageLoadingOptions/avoidDecode`` (the bytes are in the response).
    ///
    /// ```swift
    /// let header = try ImageCoderRegistry.default.readHeader(data)
    /// let undecoded = Image(header: header)   // undecoded.isDecoded == false
    /// ```
    public init(header: ImageHeader, scale: Double = 1) {
        self.init(
            format: header.format, pixelWidth: header.pixelWidth, pixelHeight: header.pixelHeight, bytesPerRow: 0,
            pixels: [], isOpaque: !header.hasAlpha, scale: scale, frameCount: header.frameCount)
    }

    /// Whether the pixels were decoded (false for an ``init(header:scale:)`` image).
    public var isDecoded: Bool { !pixels.isEmpty || pixelWidth == 0 || pixelHeight == 0 }
}
