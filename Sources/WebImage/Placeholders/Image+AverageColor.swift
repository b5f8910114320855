extension Image {
    /// The average colour of the first frame, straight alpha: colours weighted by their alpha
    /// (a transparent pixel's colour counts for nothing), alpha the mean alpha. Fully
    /// transparent images give transparent black. One pass over the pixels: call it on a
    /// thumbnail of a large image.
    ///
    /// ```swift
    /// let colour = try image.resized(toFitWidth: 100, height: 100).averageColor()
    /// print(colour.hex)  // "3a5f8cff"
    /// ```
    public func averageColor() throws(PlaceholderError) -> RGBAColor {
        if let problem = bufferProblem { throw .unusableImage(problem) }
        var sums = SIMD4<UInt64>(repeating: 0)
        pixels.withUnsafeBufferPointer { buffer in
            for y in 0..<pixelHeight {
                var row = SIMD4<UInt64>(repeating: 0)
                for x in 0..<pixelWidth {
                    let offset = y * bytesPerRow + x * 4
                    row &+= SIMD4(UInt64(buffer[offset]), UInt64(buffer[offset + 1]), UInt64(buffer[offset + 2]), UInt64(buffer[offset + 3]))
                }
                sums &+= row
            }
        }
        // Pixels are premultiplied: the colour sums are already alpha-weighted.
        let alpha = sums[3]
        guard alpha > 0 else { return RGBAColor(red: 0, green: 0, blue: 0, alpha: 0) }
        func channel(_ sum: UInt64) -> UInt8 { UInt8(min(255, (sum * 255 + alpha / 2) / alpha)) }
        let count = UInt64(pixelWidth) * UInt64(pixelHeight)
        return RGBAColor(red: channel(sums[0]), green: channel(sums[1]), blue: channel(sums[2]),
                         alpha: UInt8((alpha + count / 2) / count))
    }
}
