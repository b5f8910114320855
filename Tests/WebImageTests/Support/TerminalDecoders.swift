import Foundation
import WebImageTerminal

/// Decoders for what the terminal encoders write, so tests compare pixels, not strings.
enum TerminalDecoders {
    struct RGB: Equatable, CustomStringConvertible {
        var r: Int, g: Int, b: Int
        var description: String { "(\(r),\(g),\(b))" }
    }

    /// A decoded picture: `width × height` colours, row by row (nil: never painted).
    struct Pixels {
        var width: Int, height: Int
        var values: [RGB?]
        subscript(x: Int, y: Int) -> RGB? { values[y * width + x] }
    }

    /// Parses a DEC sixel sequence: raster attributes, palette (`#n;2;r;g;b` in percent),
    /// colour selection, sixel characters, `!N` repeats, `$` and `-`.
    static func sixel(_ text: String) throws -> Pixels {
        let bytes = Array(text.utf8)
        guard let q = bytes.firstIndex(of: UInt8(ascii: "q")), bytes.starts(with: [0x1B, UInt8(ascii: "P")]) else {
            throw DecodeError("not a sixel sequence")
        }
        var i = q + 1
        func number() -> Int {
            var value = 0
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { value = value * 10 + Int(bytes[i] - 48); i += 1 }
            return value
        }
        func numbers() -> [Int] {
            var values = [number()]
            while i < bytes.count, bytes[i] == UInt8(ascii: ";") { i += 1; values.append(number()) }
            return values
        }
        guard bytes[i] == UInt8(ascii: "\"") else { throw DecodeError("no raster attributes") }
        i += 1
        let raster = numbers()
        guard raster.count == 4 else { throw DecodeError("bad raster attributes \(raster)") }
        var pixels = Pixels(width: raster[2], height: raster[3], values: Array(repeating: nil, count: raster[2] * raster[3]))
        var palette: [Int: RGB] = [:]
        var colour = 0, x = 0, band = 0
        func paint(_ character: UInt8, count: Int) {
            let bits = Int(character) - 63
            for _ in 0..<count {
                for dy in 0..<6 where bits & (1 << dy) != 0 {
                    let y = band * 6 + dy
                    if x < pixels.width && y < pixels.height { pixels.values[y * pixels.width + x] = palette[colour] }
                }
                x += 1
            }
        }
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case 0x1B: return pixels
            case UInt8(ascii: "#"):
                i += 1
                let values = numbers()
                if values.count == 5 {
                    func scale(_ percent: Int) -> Int { (percent * 255 + 50) / 100 }
                    palette[values[0]] = RGB(r: scale(values[2]), g: scale(values[3]), b: scale(values[4]))
                }
                colour = values[0]
            case UInt8(ascii: "!"):
                i += 1
                let count = number()
                paint(bytes[i], count: count)
                i += 1
            case UInt8(ascii: "$"): x = 0; i += 1
            case UInt8(ascii: "-"): x = 0; band += 1; i += 1
            case 63...126: paint(byte, count: 1); i += 1
            default: throw DecodeError("unexpected byte \(byte) at \(i)")
            }
        }
        throw DecodeError("no string terminator")
    }

    /// Parses kitty graphics commands: the transmitted RGBA image (straight alpha).
    static func kitty(_ text: String) throws -> (width: Int, height: Int, rgba: [UInt8], controls: [[String: String]]) {
        var controls: [[String: String]] = []
        var payload = ""
        var rest = Substring(text)
        while let start = rest.range(of: "\u{1B}_G") {
            guard let end = rest[start.upperBound...].range(of: "\u{1B}\\") else { throw DecodeError("unterminated APC") }
            let body = rest[start.upperBound..<end.lowerBound]
            let parts = body.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            var control: [String: String] = [:]
            for pair in parts[0].split(separator: ",") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                control[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
            }
            controls.append(control)
            if control["a"] != "d", parts.count > 1 { payload += parts[1] }
            rest = rest[end.upperBound...]
        }
        guard let first = controls.first(where: { $0["a"] == "T" }), let width = first["s"].flatMap(Int.init),
              let height = first["v"].flatMap(Int.init), let data = Data(base64Encoded: payload) else {
            throw DecodeError("no transmission")
        }
        return (width, height, Array(data), controls)
    }

    /// Parses half-block lines into cells: `▀` with its foreground (upper pixel) and background
    /// (lower pixel) colours.
    static func halfBlocks(_ lines: [String]) throws -> [[(top: RGB, bottom: RGB)]] {
        try lines.map { line in
            var cells: [(top: RGB, bottom: RGB)] = []
            var foreground: RGB?, background: RGB?
            let scalars = Array(line.unicodeScalars)
            var i = 0
            while i < scalars.count {
                if scalars[i] == "\u{1B}" {
                    guard let m = scalars[i...].firstIndex(of: "m") else { throw DecodeError("unterminated SGR") }
                    let parameters = String(String.UnicodeScalarView(scalars[(i + 2)..<m])).split(separator: ";").compactMap { Int($0) }
                    if parameters.count == 5, parameters[1] == 2 {
                        let colour = RGB(r: parameters[2], g: parameters[3], b: parameters[4])
                        if parameters[0] == 38 { foreground = colour } else if parameters[0] == 48 { background = colour }
                    }
                    i = m + 1
                } else if scalars[i] == "▀" {
                    guard let foreground, let background else { throw DecodeError("a cell without colours") }
                    cells.append((foreground, background))
                    i += 1
                } else {
                    throw DecodeError("unexpected character \(scalars[i])")
                }
            }
            return cells
        }
    }

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
