extension ImageProcessors {
    /// Sharpens with an unsharp mask: each pixel moves away from its Gaussian-blurred
    /// neighbourhood (``ImageProcessors/GaussianBlur`` of standard deviation `sigma`) by the same amount,
    /// `out = 2·p − blur(p)`, clamped (imgproxy's `sharpen`). Runs on premultiplied pixels, the
    /// colour kept within the alpha. Identifier: `sharpen(0.8)`.
    ///
    /// ```swift
    /// let crisp = try image.processed(by: [.resize(width: 400, height: 400), .sharpen(sigma: 0.8)])
    /// ```
    public struct Sharpen: ImageProcessing, Hashable {
        /// The blur's standard deviation in pixels, 0 (no change) to 100.
        public var sigma: Double

        public init(sigma: Double) { self.sigma = sigma }

        public var identifier: String { "sharpen(\(identifierNumber(sigma)))" }

        /// The blurred copy and the blur's own second buffer.
        public func workingBytes(width: Int, height: Int) -> Int {
            let one = GaussianBlur(radius: sigma).workingBytes(width: width, height: height)
            return one > Int.max / 2 ? .max : one * 2
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard sigma.isFinite, sigma >= 0, sigma <= 100 else {
                throw .invalidParameter(processor: identifier, reason: "the sigma must be between 0 and 100")
            }
            guard sigma > 0 else { return image }
            let blurred = try GaussianBlur(radius: sigma).process(image).pixels
            var pixels = image.packedPixels
            pixels.withUnsafeMutableBufferPointer { p in
                blurred.withUnsafeBufferPointer { b in
                    for i in stride(from: 0, to: p.count, by: 4) {
                        if i & 0xFFFF == 0, Task.isCancelled { return }
                        let alpha = Int(p[i + 3])
                        for c in 0..<3 {
                            let value = 2 * Int(p[i + c]) - Int(b[i + c])
                            p[i + c] = UInt8(min(max(value, 0), alpha))
                        }
                    }
                }
            }
            return image.replacing(pixels: pixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: image.isOpaque)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Sharpen {
    /// An unsharp mask with a Gaussian of `sigma` pixels.
    ///
    /// ```swift
    /// let crisp = try image.processed(by: [.sharpen(sigma: 1)])
    /// ```
    public static func sharpen(sigma: Double) -> Self { .init(sigma: sigma) }
}
