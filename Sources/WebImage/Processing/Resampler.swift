/// High-quality downscaling of premultiplied RGBA8 pixels by area averaging (a box filter
/// with exact fractional coverage).
///
/// Each output pixel is the average of the source area it covers, edge pixels weighted by the
/// fraction that falls inside. Averaging premultiplied values keeps colours right at
/// transparent edges (no dark fringes). For reduction — thumbnails — area averaging is what
/// Pillow's `reduce` and ImageMagick's `-scale` do: no ringing (unlike Lanczos), no aliasing
/// (unlike bilinear sampling), and it needs only the source rows that cover one output row at
/// a time, so memory stays at one output row of accumulators. Enlarging works too (it becomes
/// a blend of the one or two nearest pixels) but is not what it is built for.
///
/// ```swift
/// let (w, h) = Resampler.fittingSize(width: 4000, height: 3000, maxWidth: 256, maxHeight: 256)
/// let thumbnail = Resampler.resize(image, width: w, height: h)   // 256 × 192
/// ```
public enum Resampler {
    /// The largest size with the aspect ratio of `width × height` that fits in the box (each side
    /// at least 1). Never larger than the source.
    public static func fittingSize(width: Int, height: Int, maxWidth: Int, maxHeight: Int) -> (width: Int, height: Int) {
        guard width > maxWidth || height > maxHeight, width > 0, height > 0 else { return (width, height) }
        let factor = min(Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        return (max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())))
    }

    /// `image` scaled to `width × height`, every animation frame included.
    public static func resize(_ image: Image, width: Int, height: Int) -> Image {
        guard width != image.pixelWidth || height != image.pixelHeight else { return image }
        var result = image
        result.pixels = resample(image.pixels, width: image.pixelWidth, height: image.pixelHeight,
                                 bytesPerRow: image.bytesPerRow, toWidth: width, toHeight: height)
        result.pixelWidth = width
        result.pixelHeight = height
        result.bytesPerRow = width * 4
        if !image.frames.isEmpty {
            result.frames = image.frames.enumerated().map { index, frame in
                ImageFrame(
                    pixels: index == 0 ? result.pixels : resample(
                        frame.pixels, width: image.pixelWidth, height: image.pixelHeight,
                        bytesPerRow: image.pixelWidth * 4, toWidth: width, toHeight: height),
                    duration: frame.duration)
            }
        }
        return result
    }

    /// Packed RGBA8 (`4 * toWidth` bytes per row) resampled from a `width × height` buffer.
    public static func resample(
        _ pixels: [UInt8], width: Int, height: Int, bytesPerRow: Int, toWidth: Int, toHeight: Int
    ) -> [UInt8] {
        precondition(width > 0 && height > 0 && toWidth > 0 && toHeight > 0, "sizes must be positive")
        precondition(pixels.count >= bytesPerRow * (height - 1) + width * 4, "buffer too small")
        let columns = spans(source: width, target: toWidth)
        let rows = spans(source: height, target: toHeight)
        var output = [UInt8](repeating: 0, count: toWidth * toHeight * 4)
        var accumulator = [Float](repeating: 0, count: toWidth * 4)
        var line = [Float](repeating: 0, count: toWidth * 4)
        pixels.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                for (y, rowSpan) in rows.enumerated() {
                    for i in accumulator.indices { accumulator[i] = 0 }
                    for (k, weight) in rowSpan.weights.enumerated() {
                        reduceRow(src, offset: (rowSpan.first + k) * bytesPerRow, columns: columns, into: &line)
                        for i in accumulator.indices { accumulator[i] += line[i] * weight }
                    }
                    let base = y * toWidth * 4
                    for i in accumulator.indices { dst[base + i] = UInt8(min(255, accumulator[i] + 0.5)) }
                }
            }
        }
        return output
    }

    // MARK: - Internals

    /// The source pixels one output pixel covers: the first index and one weight per pixel,
    /// weights summing to 1.
    struct Span {
        var first: Int
        var weights: [Float]
    }

    static func spans(source: Int, target: Int) -> [Span] {
        let scale = Double(source) / Double(target)
        return (0..<target).map { i in
            let start = Double(i) * scale, end = min(Double(i + 1) * scale, Double(source))
            let first = min(Int(start), source - 1), last = max(first, min(Int(end.rounded(.up)) - 1, source - 1))
            let weights = (first...last).map { j -> Float in
                let covered = min(end, Double(j + 1)) - max(start, Double(j))
                return Float(max(covered, 0) / (end - start))
            }
            return Span(first: first, weights: weights)
        }
    }

    private static func reduceRow(_ src: UnsafeBufferPointer<UInt8>, offset: Int, columns: [Span], into line: inout [Float]) {
        line.withUnsafeMutableBufferPointer { out in
            for (x, span) in columns.enumerated() {
                var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                var s = offset + span.first * 4
                for weight in span.weights {
                    r += Float(src[s]) * weight
                    g += Float(src[s + 1]) * weight
                    b += Float(src[s + 2]) * weight
                    a += Float(src[s + 3]) * weight
                    s += 4
                }
                out[x * 4] = r; out[x * 4 + 1] = g; out[x * 4 + 2] = b; out[x * 4 + 3] = a
            }
        }
    }
}
