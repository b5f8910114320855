extension ImageProcessors {
    /// Turns the image clockwise by `degrees` (negative turns anticlockwise).
    ///
    /// Multiples of 90° move pixels exactly (the sides swap for 90° and 270°). Any other angle
    /// grows the canvas to hold the whole turned picture (the size Pillow's
    /// `rotate(expand=True)` gives), samples the source bilinearly and fills the corners with
    /// `background`; pixels on the picture's edge blend with the background, so edges are smooth.
    /// Identifier: `rotate(90)`, `rotate(30,background:ffffffff)`.
    ///
    /// ```swift
    /// let portrait = try landscape.processed(by: [.rotate(degrees: 90)])
    /// let tilted = try image.processed(by: [.rotate(degrees: 12, background: .white)])
    /// ```
    public struct Rotate: ImageProcessing, Hashable {
        /// Clockwise; any finite value (taken modulo 360).
        public var degrees: Double
        /// What fills the corners the turned picture leaves empty (unused for multiples of 90°).
        public var background: RGBAColor

        /// `degrees` is kept reduced to (−360, 360) (`truncatingRemainder`, exact): the identifier,
        /// and so every cache key and ETag, names the angle the pixels are turned by. Turning by
        /// an unreduced 2⁵⁷ + 40 once rendered about −0.4° under the identifier of 40°, so one
        /// request could put its result in the cache for another's.
        public init(degrees: Double, background: RGBAColor = .clear) {
            self.degrees = degrees.isFinite ? degrees.truncatingRemainder(dividingBy: 360) : degrees
            self.background = background
        }

        /// The quarter turns when `degrees` is a multiple of 90, else `nil`.
        var quarterTurns: Int? {
            guard degrees.isFinite, degrees.truncatingRemainder(dividingBy: 90) == 0 else { return nil }
            return (Int(degrees.truncatingRemainder(dividingBy: 360) / 90) + 4) % 4
        }

        /// The angle the pixels are turned by, in [0, 360): the identifier names exactly this
        /// value, and both the size and the pixels are computed from it.
        var angle: Double {
            guard degrees.isFinite else { return degrees }
            let turned = degrees.truncatingRemainder(dividingBy: 360)
            return turned < 0 ? turned + 360 : turned
        }

        public var identifier: String {
            if let turns = quarterTurns { return "rotate(\(turns * 90))" }
            return "rotate(\(identifierNumber(angle)),background:\(background.hex))"
        }

        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            switch quarterTurns {
            case 0, 2: return (width, height)
            case 1, 3: return (height, width)
            default:
                guard degrees.isFinite else { return (width, height) }
                let turn = AffineRotation(width: width, height: height, degrees: angle)
                return (turn.outputWidth, turn.outputHeight)
            }
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard degrees.isFinite else { throw .invalidParameter(processor: identifier, reason: "the angle must be finite") }
            switch quarterTurns {
            case 0: return image.replacing(pixels: image.packedPixels, width: image.pixelWidth, height: image.pixelHeight, isOpaque: image.isOpaque)
            case 1: return try image.reoriented(.right)  // the stored picture turned 90° clockwise
            case 2: return try image.reoriented(.down)
            case 3: return try image.reoriented(.left)
            default: break
            }
            let turn = AffineRotation(width: image.pixelWidth, height: image.pixelHeight, degrees: angle)
            try checkOutputSize(width: turn.outputWidth, height: turn.outputHeight)
            let pixels = turn.apply(image.packedPixels, background: background.premultiplied)
            return image.replacing(
                pixels: pixels, width: turn.outputWidth, height: turn.outputHeight,
                isOpaque: image.isOpaque && background.alpha == 255)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Rotate {
    /// Turns the image clockwise by `degrees`; corners outside the picture become `background`.
    ///
    /// ```swift
    /// let turned = try image.processed(by: [.rotate(degrees: 270)])
    /// ```
    public static func rotate(degrees: Double, background: RGBAColor = .clear) -> Self {
        .init(degrees: degrees, background: background)
    }
}
