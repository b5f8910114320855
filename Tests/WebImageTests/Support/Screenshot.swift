import Foundation

/// A screen's pixels read from an X window dump (`xwd`'s format: a big-endian header, a colour
/// map, then true-colour pixels of 24 or 32 bits laid out by the header's byte order and masks).
struct Screenshot: Sendable {
    let width: Int, height: Int
    private let rgb: [UInt8]

    init(xwd data: Data) throws {
        let bytes = [UInt8](data)
        func field(_ index: Int) throws -> Int {
            let at = index * 4
            guard at + 4 <= bytes.count else { throw XDisplay.XError(description: "xwd dump too short (\(bytes.count) bytes)") }
            return bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        let headerSize = try field(0), format = try field(2)
        width = try field(4)
        height = try field(5)
        let lsbFirst = try field(7) == 0, bitsPerPixel = try field(11), bytesPerLine = try field(12)
        let masks = [try field(14), try field(15), try field(16)], colours = try field(19)
        // The pixel stride comes from the row length: Xvfb's depth-24 screens keep 4 bytes a pixel
        // while the header's bits-per-pixel field says 24.
        let stride = width > 0 ? bytesPerLine / width : 0
        guard format == 2, bitsPerPixel == 24 || bitsPerPixel == 32, stride == 3 || stride == 4,
              masks.allSatisfy({ $0 != 0 }) else {
            throw XDisplay.XError(description: "not a true-colour ZPixmap dump (format \(format), \(bitsPerPixel) bits)")
        }
        let start = headerSize + colours * 12
        guard start + bytesPerLine * height <= bytes.count else {
            throw XDisplay.XError(description: "xwd dump truncated")
        }
        let shifts = masks.map { $0.trailingZeroBitCount }
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let at = start + y * bytesPerLine + x * stride
                var value = 0
                for i in 0..<stride {
                    value |= Int(bytes[at + i]) << (8 * (lsbFirst ? i : stride - 1 - i))
                }
                for channel in 0..<3 {
                    rgb[(y * width + x) * 3 + channel] = UInt8(truncatingIfNeeded: (value & masks[channel]) >> shifts[channel])
                }
            }
        }
        self.rgb = rgb
    }

    /// The colour at (`x`, `y`) as `[r, g, b]`.
    subscript(x x: Int, y y: Int) -> [Int] {
        let at = (y * width + x) * 3
        return [Int(rgb[at]), Int(rgb[at + 1]), Int(rgb[at + 2])]
    }

    /// The smallest rectangle holding every pixel within `tolerance` of `colour` that is part of a
    /// horizontal run of at least `run` such pixels (so single glyph strokes do not count).
    func bounds(of colour: [Int], tolerance: Int = 40, run: Int = 6) -> (x: Range<Int>, y: Range<Int>)? {
        var minX = Int.max, maxX = -1, minY = Int.max, maxY = -1
        for y in 0..<height {
            var length = 0
            for x in 0..<width {
                let at = (y * width + x) * 3
                let near = abs(Int(rgb[at]) - colour[0]) <= tolerance && abs(Int(rgb[at + 1]) - colour[1]) <= tolerance
                    && abs(Int(rgb[at + 2]) - colour[2]) <= tolerance
                length = near ? length + 1 : 0
                guard length >= run else { continue }
                minX = min(minX, x - run + 1)
                maxX = max(maxX, x)
                minY = min(minY, y)
                maxY = max(maxY, y)
            }
        }
        return maxX < 0 ? nil : (minX..<maxX + 1, minY..<maxY + 1)
    }
}
