/// Repeated box blurs with a fractional radius over packed RGBA8, in 8.24 fixed point.
///
/// A box of radius `R = r + f` averages the `2r + 1` pixels around each pixel at full weight and
/// the next pixel on each side at weight `f`, all divided by `2R + 1`. Each pass reads the
/// previous pass's 8-bit result (rounded half up), as Pillow's box blur does, so a Gaussian
/// built from three passes matches Pillow's to the rounding. Horizontal passes slide a sum along
/// each row; vertical passes slide one sum per column down the image, whole rows at a time, so
/// both walk memory in order.
struct BoxBlur {
    static let passes = 3

    let whole: Int
    /// Weight of each of the `2r + 1` full pixels and of each of the two edge pixels, of 2²⁴.
    let fullWeight: UInt32, edgeWeight: UInt32

    init(radius: Float) {
        whole = Int(radius)
        fullWeight = UInt32(Float(1 << 24) / (radius * 2 + 1))  // in single precision, as Pillow
        edgeWeight = (UInt32(1 << 24) - UInt32(whole * 2 + 1) * fullWeight) / 2
    }

    /// Blurs `width × height` packed pixels in place: `passes` times along rows, then columns.
    func blur(_ pixels: inout [UInt8], width: Int, height: Int) {
        var other = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeMutableBufferPointer { image in
            var line = [SIMD4<UInt32>](repeating: .zero, count: width)
            var spare = [SIMD4<UInt32>](repeating: .zero, count: width)
            for y in 0..<height {
                // A cancelled task stops here; its caller throws the pixels away.
                if y & 15 == 0, Task.isCancelled { return }
                let row = UnsafeMutableBufferPointer(rebasing: image[(y * width * 4)..<((y + 1) * width * 4)])
                for x in 0..<width {
                    line[x] = SIMD4(UInt32(row[x * 4]), UInt32(row[x * 4 + 1]), UInt32(row[x * 4 + 2]), UInt32(row[x * 4 + 3]))
                }
                for _ in 0..<Self.passes {
                    blurLine(line, into: &spare)
                    swap(&line, &spare)
                }
                for x in 0..<width {
                    let v = line[x]
                    let bytes = SIMD4<UInt8>(truncatingIfNeeded: v)
                    row[x * 4] = bytes[0]; row[x * 4 + 1] = bytes[1]; row[x * 4 + 2] = bytes[2]; row[x * 4 + 3] = bytes[3]
                }
            }
        }
        for _ in 0..<Self.passes where !Task.isCancelled {
            blurColumns(pixels, into: &other, width: width, height: height)
            swap(&pixels, &other)
        }
    }

    private func clamp(_ i: Int, _ count: Int) -> Int { min(max(i, 0), count - 1) }

    /// One horizontal pass over a row of pixels (channel values 0...255).
    private func blurLine(_ input: [SIMD4<UInt32>], into output: inout [SIMD4<UInt32>]) {
        let n = input.count, r = whole
        let full = SIMD4(repeating: fullWeight), edge = SIMD4(repeating: edgeWeight), half = SIMD4<UInt32>(repeating: 1 << 23)
        input.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                // The window around pixel 0: the first pixel repeated r + 1 times (itself and the
                // edge copies before it), the next min(r, n - 1) pixels, and the last pixel again
                // for what reaches past the end. Linear in the row, whatever the radius.
                let inside = min(r, n - 1)
                var sum = src[0] &* SIMD4(repeating: UInt32(truncatingIfNeeded: r + 1))
                for k in stride(from: 1, through: inside, by: 1) { sum &+= src[k] }
                sum &+= src[n - 1] &* SIMD4(repeating: UInt32(truncatingIfNeeded: r - inside))
                for x in 0..<n {
                    let edges = src[clamp(x - r - 1, n)] &+ src[clamp(x + r + 1, n)]
                    dst[x] = (sum &* full &+ edges &* edge &+ half) &>> 24
                    sum = sum &+ src[clamp(x + r + 1, n)] &- src[clamp(x - r, n)]
                }
            }
        }
    }

    /// One vertical pass: a running sum per channel of every column, moved down row by row.
    private func blurColumns(_ input: [UInt8], into output: inout [UInt8], width: Int, height: Int) {
        let rowLength = width * 4, r = whole, full = fullWeight, edge = edgeWeight
        var sums = [UInt32](repeating: 0, count: rowLength)
        input.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                sums.withUnsafeMutableBufferPointer { sum in
                    func row(_ y: Int) -> Int { clamp(y, height) * rowLength }
                    // The window around row 0, as in `blurLine`: linear in the image, whatever the radius.
                    let inside = min(r, height - 1), last = row(height - 1)
                    for i in 0..<rowLength {
                        sum[i] = UInt32(src[i]) &* UInt32(truncatingIfNeeded: r + 1)
                            &+ UInt32(src[last + i]) &* UInt32(truncatingIfNeeded: r - inside)
                    }
                    for k in stride(from: 1, through: inside, by: 1) {
                        let base = k * rowLength
                        for i in 0..<rowLength { sum[i] &+= UInt32(src[base + i]) }
                    }
                    for y in 0..<height {
                        if y & 15 == 0, Task.isCancelled { return }
                        let above = row(y - r - 1), below = row(y + r + 1), leaving = row(y - r), out = y * rowLength
                        for i in 0..<rowLength {
                            let edges = UInt32(src[above + i]) &+ UInt32(src[below + i])
                            dst[out + i] = UInt8(truncatingIfNeeded: (sum[i] &* full &+ edges &* edge &+ (1 << 23)) >> 24)
                            sum[i] = sum[i] &+ UInt32(src[below + i]) &- UInt32(src[leaving + i])
                        }
                    }
                }
            }
        }
    }
}
