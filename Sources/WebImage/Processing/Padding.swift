extension ImageProcessors {
    /// Adds a border of `background` around the image: `top`, `right`, `bottom` and `left`
    /// pixels (imgproxy's `padding`). The background is transparent unless given; a translucent
    /// or transparent one makes the result not opaque. Identifier: `padding(10,20,10,20,ffffffff)`.
    ///
    /// ```swift
    /// let framed = try image.processed(by: [.padding(top: 8, right: 8, bottom: 8, left: 8, background: .white)])
    /// ```
    public struct Padding: ImageProcessing, Hashable {
        public var top: Int, right: Int, bottom: Int, left: Int
        public var background: RGBAColor

        public init(top: Int, right: Int, bottom: Int, left: Int, background: RGBAColor = .clear) {
            self.top = top
            self.right = right
            self.bottom = bottom
            self.left = left
            self.background = background
        }

        public var identifier: String { "padding(\(top),\(right),\(bottom),\(left),\(background.hex))" }

        /// The size with the border; an absurd border gives `Int.max` (refused), never a trap.
        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            (Self.sum(width, left, right), Self.sum(height, top, bottom))
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard min(top, right, bottom, left) >= 0 else {
                throw .invalidParameter(processor: identifier, reason: "the padding must be 0 or more")
            }
            let size = outputSize(width: image.pixelWidth, height: image.pixelHeight)
            try checkOutputSize(width: size.width, height: size.height)
            return image.placed(onCanvas: size, at: (left, top), background: background)
        }

        static func sum(_ values: Int...) -> Int {
            values.reduce(0) { total, value in
                let (sum, overflow) = total.addingReportingOverflow(max(value, 0))
                return overflow ? .max : sum
            }
        }
    }

    /// Pads the image to at least `width × height` on a `background` canvas (imgproxy's
    /// `extend`), placed where `gravity` says — centred by default, at an edge or a corner for a
    /// compass point, or centred on a focal point of the canvas as far as the canvas allows
    /// (``Gravity/smart`` is the centre); a side already as
    /// long is kept. An offset moves the image from that place, in pixels, inwards from the edge
    /// a compass point names and right and down from the centre (imgproxy's `x_offset` and
    /// `y_offset`), never past the canvas's edges. Identifier: `extend(400x300,00000000)`, with
    /// `,gravity:no` appended when the gravity is not the centre and `,offset:10:-5` when an
    /// offset is not zero.
    ///
    /// ```swift
    /// let boxed = try image.processed(by: [.resize(width: 400, height: 300), .extend(width: 400, height: 300, background: .white)])
    /// let top = try image.processed(by: [.extend(width: 400, height: 300, gravity: .north)])
    /// let lowered = try image.processed(by: [.extend(width: 400, height: 300, gravity: .north, offsetY: 20)])
    /// ```
    public struct Extend: ImageProcessing, Hashable {
        public var width: Int, height: Int
        public var background: RGBAColor
        /// Where the image sits on the canvas.
        public var gravity: Gravity
        /// Pixels the image moves from where `gravity` puts it (see the type's description).
        public var offsetX: Int, offsetY: Int

        public init(width: Int, height: Int, background: RGBAColor = .clear, gravity: Gravity = .center, offsetX: Int = 0, offsetY: Int = 0) {
            self.width = width
            self.height = height
            self.background = background
            self.gravity = gravity
            self.offsetX = offsetX
            self.offsetY = offsetY
        }

        public var identifier: String {
            let placed = gravity == .center ? "" : ",gravity:\(gravity.identifier)"
            let moved = offsetX == 0 && offsetY == 0 ? "" : ",offset:\(offsetX):\(offsetY)"
            return "extend(\(width)x\(height),\(background.hex)\(placed)\(moved))"
        }

        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            (max(width, self.width), max(height, self.height))
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            let size = outputSize(width: image.pixelWidth, height: image.pixelHeight)
            try checkOutputSize(width: size.width, height: size.height)
            if size == (image.pixelWidth, image.pixelHeight) { return image }
            // A window the image's size within the canvas: the same placement as a crop's.
            let keep = (width: image.pixelWidth, height: image.pixelHeight)
            let at = gravity.origin(keep: keep, total: size, offset: (offsetX, offsetY))
            return image.placed(onCanvas: size, at: at, background: background)
        }
    }
}

extension Image {
    /// This image's pixels at `origin` on a `size` canvas filled with `background`; the caller
    /// has checked that the canvas holds the image and is within the pixel limit.
    func placed(onCanvas size: (width: Int, height: Int), at origin: (x: Int, y: Int), background: RGBAColor) -> Image {
        let fill = background.premultiplied
        let pixel: [UInt8] = [fill.x, fill.y, fill.z, fill.w].map { UInt8(min(max($0.rounded(), 0), 255)) }
        let rowBytes = size.width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * size.height)
        pixels.withUnsafeMutableBufferPointer { out in
            if background.alpha > 0 {
                for i in stride(from: 0, to: out.count, by: 4) {
                    // A cancelled task stops here (every 1 M pixels); its caller throws the pixels away.
                    if i & 0x3F_FFFF == 0, Task.isCancelled { return }
                    out[i] = pixel[0]; out[i + 1] = pixel[1]; out[i + 2] = pixel[2]; out[i + 3] = pixel[3]
                }
            }
            self.pixels.withUnsafeBufferPointer { source in
                let copied = pixelWidth * 4
                for row in 0..<pixelHeight {
                    let to = (origin.y + row) * rowBytes + origin.x * 4
                    (out.baseAddress! + to).update(from: source.baseAddress! + row * bytesPerRow, count: copied)
                }
            }
        }
        return replacing(pixels: pixels, width: size.width, height: size.height, isOpaque: isOpaque && background.alpha == 255)
    }
}

extension ImageProcessing where Self == ImageProcessors.Padding {
    /// A border of `background` around the image, in pixels per side.
    ///
    /// ```swift
    /// let framed = try image.processed(by: [.padding(top: 4, right: 4, bottom: 4, left: 4, background: .black)])
    /// ```
    public static func padding(top: Int, right: Int, bottom: Int, left: Int, background: RGBAColor = .clear) -> Self {
        .init(top: top, right: right, bottom: bottom, left: left, background: background)
    }
}

extension ImageProcessing where Self == ImageProcessors.Extend {
    /// The image on a `background` canvas of at least `width × height`, placed where `gravity`
    /// says (centred by default).
    ///
    /// ```swift
    /// let boxed = try image.processed(by: [.extend(width: 512, height: 512, background: .white)])
    /// let banner = try image.processed(by: [.extend(width: 512, height: 512, gravity: .southWest)])
    /// ```
    public static func extend(
        width: Int, height: Int, background: RGBAColor = .clear, gravity: ImageProcessors.Gravity = .center, offsetX: Int = 0, offsetY: Int = 0
    ) -> Self {
        .init(width: width, height: height, background: background, gravity: gravity, offsetX: offsetX, offsetY: offsetY)
    }
}
