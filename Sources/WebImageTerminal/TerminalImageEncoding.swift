public import WebImage

/// Turns an image into the escape sequences a terminal draws it with.
///
/// The picture is drawn pixel for pixel (resize it to the cell box first); its first line goes
/// at the cursor, each further line one row below at the same column. Transparent pixels are
/// composited over ``TerminalColor`` `background`.
///
/// ```swift
/// let picture = HalfBlockEncoder().encode(image.resized(toFitWidth: 40, height: 40), background: .black)
/// for (row, line) in picture.lines.enumerated() { print("\u{1B}[\(row + 1);1H" + line, terminator: "") }
/// ```
public protocol TerminalImageEncoding: Sendable {
    /// How many terminal cells one cell box holds in pixels for this encoder, given the cell's
    /// pixel size (half-blocks: one pixel wide, two high, whatever the font).
    func pixelSize(columns: Int, rows: Int, cell: CellSize) -> (width: Int, height: Int)
    func encode(_ image: Image, background: TerminalColor) -> TerminalPicture
}

/// Escape sequences for one picture: each line starts at the picture's column, one row below
/// the previous. Graphics protocols (kitty, sixel, iTerm2) have one line.
public struct TerminalPicture: Sendable, Equatable {
    public var lines: [String]
    public init(lines: [String]) { self.lines = lines }
}

/// A 24-bit colour.
public struct TerminalColor: Sendable, Hashable {
    public var red: UInt8, green: UInt8, blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
    public static let black = TerminalColor(red: 0, green: 0, blue: 0)
}

/// A terminal cell's size in pixels (from `TIOCGWINSZ`, else a common 10×20).
public struct CellSize: Sendable, Hashable {
    public var width: Int, height: Int
    public init(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
    }
    public static let typical = CellSize(width: 10, height: 20)
}

extension Image {
    /// The opaque colour of pixel (x, y) over `background` (pixels are premultiplied).
    func composited(x: Int, y: Int, over background: TerminalColor) -> TerminalColor {
        let i = y * bytesPerRow + x * 4
        let alpha = Int(pixels[i + 3])
        if alpha == 255 { return TerminalColor(red: pixels[i], green: pixels[i + 1], blue: pixels[i + 2]) }
        func mix(_ value: UInt8, _ under: UInt8) -> UInt8 { UInt8(min(255, Int(value) + (Int(under) * (255 - alpha) + 127) / 255)) }
        return TerminalColor(red: mix(pixels[i], background.red), green: mix(pixels[i + 1], background.green), blue: mix(pixels[i + 2], background.blue))
    }
}
