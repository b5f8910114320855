extension Resampler {
    /// The same resampling with the axes the other way round: each output row is first summed
    /// down its source rows across the source's width, then filtered along the row. Chosen by
    /// ``resample(_:width:height:bytesPerRow:toWidth:toHeight:)`` when it costs far fewer taps
    /// (a narrow source made wide and short); memory is one source-wide row.
    static func resampleColumnsFirst(
        _ pixels: [UInt8], width: Int, bytesPerRow: Int, toWidth: Int, toHeight: Int, columns: Filter, rows: Filter
    ) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: toWidth * toHeight * 4)
        var line = [SIMD4<Float>](repeating: .zero, count: width)
        pixels.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                line.withUnsafeMutableBufferPointer { line in
                    // A cancelled task stops at a look; its caller throws the rows away.
                    var check = CancelCheck()
                    rowsOut: for y in 0..<toHeight {
                        let taps = rows.taps(y)
                        if check.stops(after: columns.weights.count) { break }
                        for k in 0..<taps.count {
                            if check.stops(after: width) { break rowsOut }
                            let row = src.baseAddress! + (taps.first + k) * bytesPerRow
                            let weight = rows.weights[taps.weightOffset + k]
                            for x in 0..<width {
                                let p = row + x * 4
                                let value = SIMD4(Float(p[0]), Float(p[1]), Float(p[2]), Float(p[3])) * weight
                                line[x] = k == 0 ? value : line[x] + value
                            }
                        }
                        let out = dst.baseAddress! + y * toWidth * 4
                        for x in 0..<toWidth {
                            let tap = columns.taps(x)
                            var sum = SIMD4<Float>.zero
                            for j in 0..<tap.count { sum += line[tap.first + j] * columns.weights[tap.weightOffset + j] }
                            store(sum, at: out + x * 4)
                        }
                    }
                }
            }
        }
        return output
    }
}
