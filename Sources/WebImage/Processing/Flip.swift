extension ImageProcessors {
    /// Mirrors the image: `.horizontal` swaps left and right, `.vertical` top and bottom.
    /// Exact (pixels move, none change). Identifier: `flip(horizontal)` or `flip(vertical)`.
    ///
    /// ```swift
    /// let mirrored = try image.processed(by: [.flip(.horizontal)])
    /// ```
    public struct Flip: ImageProcessing, Hashable {
        public enum Axis: String, Sendable, Hashable {
            /// Left becomes right.
            case horizontal
            /// Top becomes bottom.
            case vertical
        }

        public var axis: Axis

        public init(_ axis: Axis) { self.axis = axis }

        public var identifier: String { "flip(\(axis.rawValue))" }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            // EXIF orientations 2 and 4 are exactly these mirrors.
            return try image.reoriented(axis == .horizontal ? .upMirrored : .downMirrored)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Flip {
    /// Mirrors the image along `axis`.
    ///
    /// ```swift
    /// let upsideDown = try image.processed(by: [.flip(.vertical)])
    /// ```
    public static func flip(_ axis: ImageProcessors.Flip.Axis) -> Self { .init(axis) }
}

extension Image {
    /// The still image moved as `orientation` describes, whatever ``orientation`` says. For
    /// processors: a cancelled task stops within a band of rows and throws
    /// ``ImageProcessingError/cancelled``.
    func reoriented(_ orientation: ImageOrientation) throws(ImageProcessingError) -> Image {
        let swapsSides = orientation.swapsWidthAndHeight
        guard let pixels = Self.reorient(
            pixels, bytesPerRow: bytesPerRow, width: pixelWidth, height: pixelHeight, orientation: orientation,
            unlessStoppedBy: { Task.isCancelled })
        else { throw .cancelled }
        return replacing(
            pixels: pixels, width: swapsSides ? pixelHeight : pixelWidth, height: swapsSides ? pixelWidth : pixelHeight,
            isOpaque: isOpaque)
    }
}
