public import WebImage

/// DEC sixel graphics (xterm `-ti vt340`, foot, mlterm, WezTerm, contour, Windows Terminal).
///
/// Colours are quantised to a fixed 6×7×6 cube of 252 palette registers, without dithering,
/// so every pixel is within half a cube step of its colour: at most 25.5 of 255 in red and
/// blue, 21.25 in green, plus under 1.3 from the percent values sixel palettes are written in
/// — 26 per channel at worst. Rows of six pixels are written colour by colour, run-length coded.
///
/// ```swift
/// FileHandle.standardOutput.write(Data(SixelEncoder().encode(image, background: .black).lines[0].utf8))
/// ```
public struct SixelEncoder: TerminalImageEncoding {
    /// The largest difference, per channel, between a pixel and its decoded palette colour.
    public static let maximumError = 26

    static let levels = (red: 6, green: 7, blue: 6)

    public init() {}

    public func pixelSize(columns: Int, rows: Int, cell: CellSize) -> (width: Int, height: Int) {
        (columns * cell.width, rows * cell.height)
    }

    public func encode(_ image: Image, background: TerminalColor) -> TerminalPicture {
        let width = image.pixelWidth, height = image.pixelHeight
        var indices = [UInt8](repeating: 0, count: width * height)
        var used = [Bool](repeating: false, count: 256)
        for y in 0..<height {
            for x in 0..<width {
                let index = Self.paletteIndex(image.composited(x: x, y: y, over: background))
                indices[y * width + x] = index
                used[Int(index)] = true
            }
        }
        var out = "\u{1B}P0;1;0q\"1;1;\(width);\(height)"
        for index in 0..<256 where used[index] {
            let (r, g, b) = Self.percentages(UInt8(index))
            out += "#\(index);2;\(r);\(g);\(b)"
        }
        var bits = [UInt8](repeating: 0, count: width)
        for top in stride(from: 0, to: height, by: 6) {
            let bandHeight = min(6, height - top)
            var colours = Set<UInt8>()
            for y in top..<(top + bandHeight) { for x in 0..<width { colours.insert(indices[y * width + x]) } }
            for (n, colour) in colours.sorted().enumerated() {
                for x in 0..<width {
                    var value: UInt8 = 0
                    for dy in 0..<bandHeight where indices[(top + dy) * width + x] == colour { value |= 1 << dy }
                    bits[x] = value
                }
                if n > 0 { out += "$" }
                out += "#\(colour)" + Self.runLength(bits)
            }
            out += "-"
        }
        return TerminalPicture(lines: [out + "\u{1B}\\"])
    }

    /// The register of the cube colour nearest to `colour`.
    static func paletteIndex(_ colour: TerminalColor) -> UInt8 {
        func level(_ value: UInt8, _ count: Int) -> Int { (Int(value) * (count - 1) + 127) / 255 }
        let r = level(colour.red, levels.red), g = level(colour.green, levels.green), b = level(colour.blue, levels.blue)
        return UInt8((r * levels.green + g) * levels.blue + b)
    }

    /// A register's colour as the percentages sixel writes.
    static func percentages(_ index: UInt8) -> (Int, Int, Int) {
        let b = Int(index) % levels.blue, g = Int(index) / levels.blue % levels.green, r = Int(index) / (levels.blue * levels.green)
        func percent(_ level: Int, _ count: Int) -> Int { (level * 200 / (count - 1) + 1) / 2 }
        return (percent(r, levels.red), percent(g, levels.green), percent(b, levels.blue))
    }

    /// Sixel characters (63 + bits) with `!N` for runs longer than three.
    static func runLength(_ bits: [UInt8]) -> String {
        var out = ""
        var i = 0
        while i < bits.count {
            var j = i + 1
            while j < bits.count && bits[j] == bits[i] { j += 1 }
            let character = String(UnicodeScalar(63 + bits[i]))
            out += j - i > 3 ? "!\(j - i)\(character)" : String(repeating: character, count: j - i)
            i = j
        }
        return out
    }
}
