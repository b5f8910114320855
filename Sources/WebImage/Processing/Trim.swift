extension ImageProcessors {
    /// Removes a uniform border: the colour of the top-left pixel, and every row and column at
    /// the edges whose pixels all lie within `threshold` of it (on each premultiplied channel,
    /// alpha included) — imgproxy's `trim`. An image that is all border (a 1 × 1 image, a blank
    /// canvas) is kept whole. Identifier: `trim(10)`.
    ///
    /// ```swift
    /// let content = try scan.processed(by: [.trim(threshold: 10)])
    /// ```
    public struct Trim: ImageProcessing, Hashable {
        /// The largest difference, 0–255, still counted as the border's colour.
        public var threshold: Int

        public init(threshold: Int) { self.threshold = threshold }

        public var identifier: String { "trim(\(threshold))" }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard (0...255).contains(threshold) else {
                throw .invalidParameter(processor: identifier, reason: "the threshold must be between 0 and 255")
            }
            guard let box = content(of: image) else { return image }
            return try Crop(.rect(x: box.x, y: box.y, width: box.width, height: box.height)).process(image)
        }

        /// The smallest rectangle holding every pixel unlike the top-left one, or `nil` when none is.
        private func content(of image: Image) -> (x: Int, y: Int, width: Int, height: Int)? {
            let width = image.pixelWidth, height = image.pixelHeight, stride = image.bytesPerRow
            let limit = Int32(threshold)
            return image.pixels.withUnsafeBufferPointer { p -> (x: Int, y: Int, width: Int, height: Int)? in
                let reference = (Int32(p[0]), Int32(p[1]), Int32(p[2]), Int32(p[3]))
                func differs(_ x: Int, _ y: Int) -> Bool {
                    let i = y * stride + x * 4
                    return abs(Int32(p[i]) - reference.0) > limit || abs(Int32(p[i + 1]) - reference.1) > limit
                        || abs(Int32(p[i + 2]) - reference.2) > limit || abs(Int32(p[i + 3]) - reference.3) > limit
                }
                func rowDiffers(_ y: Int) -> Bool { (0..<width).contains { differs($0, y) } }
                // Inward from each edge to the first line unlike the border. A cancelled task stops
                // within 16 lines and keeps the image whole; its caller throws the result away.
                func firstLine(_ lines: some Sequence<Int>, differs: (Int) -> Bool) -> Int? {
                    for (looked, line) in lines.enumerated() {
                        if differs(line) { return line }
                        if looked & 15 == 15, Task.isCancelled { return nil }
                    }
                    return nil
                }
                guard let top = firstLine(0..<height, differs: rowDiffers),
                    let bottom = firstLine((top..<height).reversed(), differs: rowDiffers)
                else { return nil }
                func columnDiffers(_ x: Int) -> Bool { (top...bottom).contains { differs(x, $0) } }
                guard let left = firstLine(0..<width, differs: columnDiffers),
                    let right = firstLine((left..<width).reversed(), differs: columnDiffers)
                else { return nil }
                return (left, top, right - left + 1, bottom - top + 1)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Trim {
    /// Removes a border of the top-left pixel's colour, within `threshold` (0–255).
    ///
    /// ```swift
    /// let content = try scan.processed(by: [.trim(threshold: 0)])
    /// ```
    public static func trim(threshold: Int) -> Self { .init(threshold: threshold) }
}
