extension ImageProcessors {
    /// Blurs the image with a Gaussian of standard deviation `radius` pixels — the meaning
    /// Pillow's `ImageFilter.GaussianBlur(radius)` gives it — approximated as Pillow does: three
    /// box blurs per axis whose width is chosen so their variance equals the Gaussian's
    /// (Gwosdek et al., "Theoretical foundations of Gaussian convolution by extended box
    /// filtering", 2011), each pass separable and linear in time whatever the radius. Edges
    /// repeat the border pixels. Runs on premultiplied pixels, so transparent areas do not bleed
    /// dark. Identifier: `blur(2.5)`.
    ///
    /// ```swift
    /// let backdrop = try image.processed(by: [.gaussianBlur(radius: 8)])
    /// ```
    public struct GaussianBlur: ImageProcessing, Hashable {
        /// Standard deviation in pixels, 0 or more (0 leaves the image unchanged).
        public var radius: Double

        public init(radius: Double) { self.radius = radius }

        public var identifier: String { "blur(\(identifierNumber(radius)))" }

        /// The passes alternate between the result and a second buffer of the same size.
        public func workingBytes(width: Int, height: Int) -> Int {
            let (pixels, overflow) = max(width, 0).multipliedReportingOverflow(by: max(height, 0))
            return overflow || pixels > Int.max / 4 ? .max : pixels * 4
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard radius.isFinite, radius >= 0, radius <= 10_000 else {
                throw .invalidParameter(processor: identifier, reason: "the radius must be between 0 and 10000")
            }
            var pixels = image.packedPixels
            if radius > 0 {
                let box = BoxBlur(radius: Self.boxRadius(sigma: radius, passes: BoxBlur.passes))
                box.blur(&pixels, width: image.pixelWidth, height: image.pixelHeight)
            }
            return image.replacing(pixels: pixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: image.isOpaque)
        }

        /// The (fractional) box radius whose `passes` repetitions have variance `sigma²`: the
        /// integer part `l` from the box length √(12σ²/n + 1), the fraction weighting one extra
        /// pixel on each side (Gwosdek et al., equations 7, 11 and 14). Single precision, as
        /// Pillow computes it, so the fixed-point weights come out the same.
        static func boxRadius(sigma: Double, passes: Int) -> Float {
            let sigma = Float(sigma)
            let variance = sigma * sigma / Float(passes)
            let length = (12 * variance + 1).squareRoot()
            let l = ((length - 1) / 2).rounded(.down)
            let fraction = (2 * l + 1) * (l * (l + 1) - 3 * variance) / (6 * (variance - (l + 1) * (l + 1)))
            return l + fraction
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.GaussianBlur {
    /// A Gaussian blur of standard deviation `radius` pixels.
    ///
    /// ```swift
    /// let soft = try image.processed(by: [.gaussianBlur(radius: 2)])
    /// ```
    public static func gaussianBlur(radius: Double) -> Self { .init(radius: radius) }
}
