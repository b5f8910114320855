extension ImageProcessors {
    /// A line painted along the inside of a rounded or circular edge.
    ///
    /// ```swift
    /// let ring = ImageProcessors.Border(width: 2, color: .white)
    /// ```
    public struct Border: Sendable, Hashable {
        /// In pixels, at least 0.
        public var width: Double
        /// Painted over the image (a translucent colour lets the image show through).
        public var color: RGBAColor

        public init(width: Double, color: RGBAColor) {
            self.width = width
            self.color = color
        }

        var identifier: String { "border:\(identifierNumber(width)),\(color.hex)" }

        var mask: (width: Double, color: SIMD4<Float>, alpha: Float) {
            (width, color.premultiplied, Float(color.alpha) / 255)
        }

        func check(_ processor: String) throws(ImageProcessingError) {
            guard width.isFinite, width >= 0 else {
                throw .invalidParameter(processor: processor, reason: "the border width must be 0 or more")
            }
        }
    }

    /// Rounds the corners with `radius` (pixels; capped at half the shorter side), anti-aliased,
    /// the outside made transparent; optionally a ``Border`` along the rounded edge.
    /// Identifier: `round(12)`, `round(12,border:2,000000ff)`.
    ///
    /// ```swift
    /// let card = try image.processed(by: [.roundedCorners(radius: 16, border: .init(width: 2, color: .black))])
    /// ```
    public struct RoundedCorners: ImageProcessing, Hashable {
        public var radius: Double
        public var border: Border?

        public init(radius: Double, border: Border? = nil) {
            self.radius = radius
            self.border = border
        }

        public var identifier: String {
            "round(\(identifierNumber(radius))\(border.map { ",\($0.identifier)" } ?? ""))"
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard radius.isFinite, radius >= 0 else { throw .invalidParameter(processor: identifier, reason: "the radius must be 0 or more") }
            try border?.check(identifier)
            var pixels = image.packedPixels
            ShapeMask(width: image.pixelWidth, height: image.pixelHeight, radius: radius, border: border?.mask).apply(to: &pixels)
            return image.replacing(
                pixels: pixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: PixelOperations.isOpaque(pixels))
        }
    }

    /// Crops the centre square (the shorter side) and cuts a circle out of it, anti-aliased, the
    /// corners transparent; optionally a ``Border`` around it. Identifier: `circle`,
    /// `circle(border:3,ffffffff)`.
    ///
    /// ```swift
    /// let avatar = try photo.processed(by: [.resize(width: 128, height: 128, mode: .fill), .circle()])
    /// ```
    public struct Circle: ImageProcessing, Hashable {
        public var border: Border?

        public init(border: Border? = nil) { self.border = border }

        public var identifier: String { border.map { "circle(\($0.identifier))" } ?? "circle" }

        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            let side = min(width, height)
            return (side, side)
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            try border?.check(identifier)
            let square = try Crop(.centerSquare).process(image)
            var pixels = square.pixels
            let side = square.pixelWidth
            ShapeMask(width: side, height: side, radius: Double(side) / 2, border: border?.mask).apply(to: &pixels)
            return square.replacing(pixels: pixels, width: side, height: side, isOpaque: PixelOperations.isOpaque(pixels))
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.RoundedCorners {
    /// Rounds the corners with `radius` pixels, optionally with a border.
    ///
    /// ```swift
    /// let rounded = try image.processed(by: [.roundedCorners(radius: 12)])
    /// ```
    public static func roundedCorners(radius: Double, border: ImageProcessors.Border? = nil) -> Self {
        .init(radius: radius, border: border)
    }
}

extension ImageProcessing where Self == ImageProcessors.Circle {
    /// The centre square cut to a circle, optionally with a border.
    ///
    /// ```swift
    /// let avatar = try image.processed(by: [.circle(border: .init(width: 2, color: .white))])
    /// ```
    public static func circle(border: ImageProcessors.Border? = nil) -> Self { .init(border: border) }
}
