/// Resampling of premultiplied RGBA8 pixels, each axis on its own: area averaging where an axis
/// shrinks, bilinear interpolation where it grows.
///
/// **Shrinking** averages the source area each output pixel covers (a box filter with exact
/// fractional coverage, edge pixels weighted by the part inside). For reduction — thumbnails —
/// that is what Pillow's `reduce` and ImageMagick's `-scale` do: no ringing (unlike Lanczos), no
/// aliasing (unlike bilinear sampling). **Growing** interpolates between the two nearest source
/// pixels (a triangle filter on pixel centres, edges clamped, as Pillow's `BILINEAR`), so
/// enlargements are smooth instead of blocky. Averaging premultiplied values keeps colours right
/// at transparent edges (no dark fringes).
///
/// Rows are filtered horizontally once each and kept in a ring of two rows, so memory stays at
/// a few output rows whatever the image size or aspect ratio.
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

    /// Packed RGBA8 (`4 * toWidth` bytes per row) resampled from a `width × height` buffer.
    public static func resample(
        _ pixels: [UInt8], width: Int, height: Int, bytesPerRow: Int, toWidth: Int, toHeight: Int
    ) -> [UInt8] {
        precondition(width > 0 && height > 0 && toWidth > 0 && toHeight > 0, "sizes must be positive")
        precondition(pixels.count >= bytesPerRow * (height - 1) + width * 4, "buffer too small")
        let columns = Filter(source: width, target: toWidth)
        let rows = Filter(source: height, target: toHeight)
        // Rows first reads every source row across the output's width; columns first reads the
        // output's rows across the source's width. Both cost their taps, and for ordinary sizes
        // about the same; a narrow, tall source stretched wide and flat (1 × 100,000 to 8192 × 1:
        // 800 million multiply-adds rows first, 108,000 columns first) must not pick the wrong one.
        let rowsFirst = columns.weights.count.multipliedReportingOverflow(by: height).partialValue + rows.weights.count * toWidth
        let columnsFirst = rows.weights.count * width + columns.weights.count * toHeight
        if columnsFirst < rowsFirst / 2 {
            return resampleColumnsFirst(pixels, width: width, bytesPerRow: bytesPerRow, toWidth: toWidth, toHeight: toHeight, columns: columns, rows: rows)
        }
        // Horizontally filtered source rows in a ring of two, each filtered when an output row
        // first reads it and summed at once: an output row reads consecutive rows in order, so
        // the row it shares with the one before (the boundary row of a reduction, or both rows
        // of an enlargement) is still in the ring, and a reduction of 100,000 rows to one needs
        // two rows of memory, not 100,000.
        let ringSize = min(rows.maxTaps, 2)
        var ring = [SIMD4<Float>](repeating: .zero, count: ringSize * toWidth)
        var ringRow = [Int](repeating: -1, count: ringSize)
        var output = [UInt8](repeating: 0, count: toWidth * toHeight * 4)
        // One output row: the weighted sum of its source rows, tap after tap over the whole
        // row (consecutive memory, no per-pixel index arithmetic), then rounded to bytes.
        var line = [SIMD4<Float>](repeating: .zero, count: toWidth)
        pixels.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                ring.withUnsafeMutableBufferPointer { ring in
                    line.withUnsafeMutableBufferPointer { line in
                        rows.weights.withUnsafeBufferPointer { rowWeights in
                            // A cancelled task stops at a look; its caller throws the rows away.
                            var check = CancelCheck()
                            rowsOut: for y in 0..<toHeight {
                                let taps = rows.taps(y)
                                for k in 0..<taps.count {
                                    let row = taps.first + k, index = row % ringSize
                                    if check.stops(after: toWidth) { break rowsOut }
                                    if ringRow[index] != row {
                                        ringRow[index] = row
                                        if check.stops(after: columns.weights.count) { break rowsOut }
                                        filterRow(src, offset: row * bytesPerRow, columns: columns,
                                                  into: UnsafeMutableBufferPointer(rebasing: ring[(index * toWidth)...]))
                                    }
                                    let slot = ring.baseAddress! + index * toWidth
                                    let weight = rowWeights[taps.weightOffset + k]
                                    if k == 0 {
                                        for x in 0..<toWidth { line[x] = slot[x] * weight }
                                    } else {
                                        for x in 0..<toWidth { line[x] += slot[x] * weight }
                                    }
                                }
                                let out = dst.baseAddress! + y * toWidth * 4
                                for x in 0..<toWidth { store(line[x], at: out + x * 4) }
                            }
                        }
                    }
                }
            }
        }
        return output
    }

    // MARK: - Internals

    /// `value` rounded to the nearest byte per channel at `out`, without a checked conversion per
    /// channel: adding 1.5 × 2²³ leaves the rounded integer in the low mantissa bits (values are
    /// clamped to 0…255 first; pointwiseMin/Max compile to vector min/max, `clamped` checks each
    /// lane for NaN).
    @inline(__always)
    static func store(_ value: SIMD4<Float>, at out: UnsafeMutablePointer<UInt8>) {
        let clamped = pointwiseMin(pointwiseMax(value, .zero), SIMD4(repeating: 255))
        let bits = unsafeBitCast(clamped + SIMD4(repeating: 12_582_912), to: SIMD4<UInt32>.self)
        out[0] = UInt8(truncatingIfNeeded: bits[0]); out[1] = UInt8(truncatingIfNeeded: bits[1])
        out[2] = UInt8(truncatingIfNeeded: bits[2]); out[3] = UInt8(truncatingIfNeeded: bits[3])
    }

    /// One axis's filter: for each output index, the consecutive source pixels it reads and their
    /// weights (summing to 1), stored flat.
    struct Filter {
        var firsts: [Int] = []
        var counts: [Int] = []
        var weightOffsets: [Int] = []
        var weights: [Float] = []

        /// Built without an array per output pixel (a map of each pixel's taps was about
        /// a thousand allocations a resize; heaptrack of `serve`, 2026-11-27): the taps are
        /// written straight into `weights`, with the same arithmetic as before.
        init(source: Int, target: Int) {
            let scale = Double(source) / Double(target)
            let shrinking = target < source
            firsts.reserveCapacity(target)
            counts.reserveCapacity(target)
            weightOffsets.reserveCapacity(target)
            weights.reserveCapacity(target * (shrinking ? Int(scale.rounded(.up)) + 1 : 2))
            for i in 0..<target {
                let offset = weights.count
                let first = shrinking
                    ? Self.appendAreaTaps(i, scale: scale, source: source, to: &weights)
                    : Self.appendTriangleTaps(i, scale: scale, source: source, to: &weights)
                firsts.append(first)
                counts.append(weights.count - offset)
                weightOffsets.append(offset)
            }
        }

        var maxTaps: Int { counts.max() ?? 1 }

        func taps(_ i: Int) -> (first: Int, count: Int, weightOffset: Int) { (firsts[i], counts[i], weightOffsets[i]) }

        /// Shrinking: the source pixels the output pixel's area covers, weighted by coverage;
        /// appended to `weights`, the first source pixel returned.
        static func appendAreaTaps(_ i: Int, scale: Double, source: Int, to weights: inout [Float]) -> Int {
            let start = Double(i) * scale, end = min(Double(i + 1) * scale, Double(source))
            let first = min(Int(start), source - 1), last = max(first, min(Int(end.rounded(.up)) - 1, source - 1))
            for j in first...last {
                let covered = min(end, Double(j + 1)) - max(start, Double(j))
                weights.append(Float(max(covered, 0) / (end - start)))
            }
            return first
        }

        /// Growing (or keeping the size): a triangle one source pixel wide around the output
        /// pixel's centre, over the source pixels inside the image (one or two), normalised.
        static func appendTriangleTaps(_ i: Int, scale: Double, source: Int, to weights: inout [Float]) -> Int {
            let centre = (Double(i) + 0.5) * scale
            let first = max(0, Int((centre - 0.5).rounded(.down))), last = min(source - 1, first + 1)
            let a = max(0, 1 - abs(Double(first) + 0.5 - centre))
            let b = last > first ? max(0, 1 - abs(Double(last) + 0.5 - centre)) : 0
            let total = last > first ? a + b : a
            let count = Double(last - first + 1)
            weights.append(Float(total > 0 ? a / total : 1 / count))
            if last > first { weights.append(Float(total > 0 ? b / total : 1 / count)) }
            return first
        }
    }

    private static func filterRow(
        _ src: UnsafeBufferPointer<UInt8>, offset: Int, columns: Filter, into line: UnsafeMutableBufferPointer<SIMD4<Float>>
    ) {
        columns.weights.withUnsafeBufferPointer { weights in
            columns.firsts.withUnsafeBufferPointer { firsts in
                columns.counts.withUnsafeBufferPointer { counts in
                    columns.weightOffsets.withUnsafeBufferPointer { offsets in
                        let base = src.baseAddress! + offset
                        for x in 0..<firsts.count {
                            var sum = SIMD4<Float>.zero
                            var p = base + firsts[x] * 4
                            let w = offsets[x]
                            for k in 0..<counts[x] {
                                sum += SIMD4(Float(p[0]), Float(p[1]), Float(p[2]), Float(p[3])) * weights[w + k]
                                p += 4
                            }
                            line[x] = sum
                        }
                    }
                }
            }
        }
    }
}
