extension ImageProcessors {
    /// Several processors applied in order, as one: the same pixels as the same list given to
    /// ``Image/processed(by:animated:)``. Its identifier joins theirs with commas
    /// (`resize(96x96,fill,upscale:false),circle`).
    ///
    /// ```swift
    /// let avatar: ImageProcessors.Composition = .composition([.resize(width: 96, height: 96, mode: .fill), .circle()])
    /// let image = try photo.processed(by: [avatar])
    /// ```
    public struct Composition: ImageProcessing, Hashable {
        public var processors: [any ImageProcessing]

        public init(_ processors: [any ImageProcessing]) { self.processors = processors }

        public var identifier: String { processors.map(\.identifier).joined(separator: ",") }

        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            processors.reduce((width, height)) { size, processor in processor.outputSize(width: size.0, height: size.1) }
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            var result = image
            for processor in processors { result = try processor.process(result) }
            return result
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.identifier == rhs.identifier }
        public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
    }

    /// A processor from a closure. `identifier` must name everything the closure does (and
    /// change when it changes): it is all the cache knows about it.
    ///
    /// ```swift
    /// let watermark = ImageProcessors.Anonymous(identifier: "com.example.watermark-v2") { image in
    ///     try Watermark.stamp(on: image)
    /// }
    /// ```
    public struct Anonymous: ImageProcessing {
        public let identifier: String
        private let closure: @Sendable (Image) throws(ImageProcessingError) -> Image

        public init(identifier: String, _ closure: @escaping @Sendable (Image) throws(ImageProcessingError) -> Image) {
            self.identifier = identifier
            self.closure = closure
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image { try closure(image) }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// `processors` applied in order, as one processor.
    ///
    /// ```swift
    /// let thumbnail = try image.processed(by: [.composition([.cropToSquare(), .resize(width: 64, height: 64)])])
    /// ```
    public static func composition(_ processors: [any ImageProcessing]) -> Self { .init(processors) }
}

extension ImageProcessing where Self == ImageProcessors.Anonymous {
    /// A processor from a closure, cached under `identifier`.
    ///
    /// ```swift
    /// let opaque = try image.processed(by: [.custom(identifier: "flatten") { image in image }])
    /// ```
    public static func custom(
        identifier: String, _ closure: @escaping @Sendable (Image) throws(ImageProcessingError) -> Image
    ) -> Self {
        .init(identifier: identifier, closure)
    }
}
