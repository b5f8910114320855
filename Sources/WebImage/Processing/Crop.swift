extension ImageProcessors {
    /// Keeps a part of the image: a rectangle in pixels (`x`, `y` from the top left), or the
    /// centred square whose side is the shorter side. Exact. A rectangle that reaches past the
    /// image's edges is cut to the image (as CGImage's `cropping(to:)` and imgproxy do); one that
    /// misses the image entirely (or has no area) throws
    /// ``ImageProcessingError/invalidParameter(processor:reason:)``.
    /// Identifier: `crop(10,20,100,50)` (x, y, width, height) or `crop(square)`.
    ///
    /// ```swift
    /// let header = try image.processed(by: [.crop(x: 0, y: 0, width: 1200, height: 300)])
    /// let square = try image.processed(by: [.cropToSquare()])
    /// ```
    public struct Crop: ImageProcessing, Hashable {
        public enum Region: Sendable, Hashable {
            case rect(x: Int, y: Int, width: Int, height: Int)
            /// The largest centred square (left and top offsets rounded down).
            case centerSquare
        }

        public var region: Region

        public init(_ region: Region) { self.region = region }

        public var identifier: String {
            switch region {
            case let .rect(x, y, width, height): "crop(\(x),\(y),\(width),\(height))"
            case .centerSquare: "crop(square)"
            }
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard let (x, y, width, height) = cut(width: image.pixelWidth, height: image.pixelHeight) else {
                throw .invalidParameter(
                    processor: identifier,
                    reason: "the rectangle does not overlap the \(image.pixelWidth) × \(image.pixelHeight) image")
            }
            if (x, y, width, height) == (0, 0, image.pixelWidth, image.pixelHeight) {
                return image.replacing(pixels: image.packedPixels, width: width, height: height, isOpaque: image.isOpaque)
            }
            // Row copies into an uninitialised buffer: every byte is written, so no zero-fill pass.
            let rowBytes = width * 4, count = rowBytes * height
            let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                image.pixels.withUnsafeBufferPointer { source in
                    for row in 0..<height {
                        let start = (y + row) * image.bytesPerRow + x * 4
                        (out.baseAddress! + row * rowBytes).update(from: source.baseAddress! + start, count: rowBytes)
                    }
                }
                initialized = count
            }
            return image.replacing(pixels: pixels, width: width, height: height, isOpaque: image.isOpaque || PixelOperations.isOpaque(pixels))
        }

        /// The cut size; an input the rectangle misses keeps its size (``process(_:)`` throws).
        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            guard let (_, _, w, h) = cut(width: width, height: height) else { return (width, height) }
            return (w, h)
        }

        /// The region within a `imageWidth × imageHeight` image (x, y, width, height), or `nil`
        /// when it has no pixel in common with it. The rectangle's numbers are untrusted (a
        /// `--process` spec, a URL): its far edges are computed without overflow.
        private func cut(width imageWidth: Int, height imageHeight: Int) -> (Int, Int, Int, Int)? {
            switch region {
            case let .rect(x, y, width, height):
                guard width > 0, height > 0 else { return nil }
                // With a positive size, an overflowing far edge lies past any image.
                let (right, rightOverflow) = x.addingReportingOverflow(width)
                let (bottom, bottomOverflow) = y.addingReportingOverflow(height)
                let left = max(x, 0), top = max(y, 0)
                let cutRight = rightOverflow ? imageWidth : min(right, imageWidth)
                let cutBottom = bottomOverflow ? imageHeight : min(bottom, imageHeight)
                guard cutRight > left, cutBottom > top else { return nil }
                return (left, top, cutRight - left, cutBottom - top)
            case .centerSquare:
                let side = min(imageWidth, imageHeight)
                guard side > 0 else { return nil }
                return ((imageWidth - side) / 2, (imageHeight - side) / 2, side, side)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Crop {
    /// Keeps the rectangle at (`x`, `y`) of `width × height` pixels.
    ///
    /// ```swift
    /// let corner = try image.processed(by: [.crop(x: 0, y: 0, width: 64, height: 64)])
    /// ```
    public static func crop(x: Int, y: Int, width: Int, height: Int) -> Self {
        .init(.rect(x: x, y: y, width: width, height: height))
    }

    /// Keeps the centred square whose side is the image's shorter side.
    ///
    /// ```swift
    /// let square = try image.processed(by: [.cropToSquare()])
    /// ```
    public static func cropToSquare() -> Self { .init(.centerSquare) }
}
