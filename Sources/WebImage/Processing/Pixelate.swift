extension ImageProcessors {
    /// Replaces each `size × size` block (from the top left; the last ones cut by the edges)
    /// with its average colour (imgproxy's `pixelate`). Identifier: `pixelate(8)`.
    ///
    /// ```swift
    /// let hidden = try image.processed(by: [.pixelate(size: 16)])
    /// ```
    public struct Pixelate: ImageProcessing, Hashable {
        /// The block's side in pixels, 1 (no change) or more.
        public var size: Int

        public init(size: Int) { self.size = size }

        public var identifier: String { "pixelate(\(size))" }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard size >= 1 else { throw .invalidParameter(processor: identifier, reason: "the block size must be 1 or more") }
            var pixels = image.packedPixels
            let width = image.pixelWidth, height = image.pixelHeight, block = min(size, max(width, height))
            guard block > 1 else { return image }
            pixels.withUnsafeMutableBufferPointer { p in
                // A block can be the whole image: the cancel is looked at by pixels done.
                var check = CancelCheck()
                for top in stride(from: 0, to: height, by: block) {
                    let bottom = min(top + block, height)
                    for left in stride(from: 0, to: width, by: block) {
                        let right = min(left + block, width)
                        var sum = SIMD4<Int>.zero
                        for y in top..<bottom {
                            if check.stops(after: 2 * (right - left)) { return }
                            for x in left..<right {
                                let i = (y * width + x) * 4
                                sum &+= SIMD4(Int(p[i]), Int(p[i + 1]), Int(p[i + 2]), Int(p[i + 3]))
                            }
                        }
                        let count = (bottom - top) * (right - left)
                        let mean = (sum &+ SIMD4(repeating: count / 2)) / SIMD4(repeating: count)
                        for y in top..<bottom {
                            for x in left..<right {
                                let i = (y * width + x) * 4
                                p[i] = UInt8(mean.x); p[i + 1] = UInt8(mean.y); p[i + 2] = UInt8(mean.z); p[i + 3] = UInt8(mean.w)
                            }
                        }
                    }
                }
            }
            return image.replacing(pixels: pixels, width: width, height: height, isOpaque: image.isOpaque)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Pixelate {
    /// Blocks of `size × size` pixels, each its average colour.
    ///
    /// ```swift
    /// let hidden = try image.processed(by: [.pixelate(size: 12)])
    /// ```
    public static func pixelate(size: Int) -> Self { .init(size: size) }
}
