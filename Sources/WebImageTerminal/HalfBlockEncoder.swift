public import WebImage

/// Truecolor half-blocks: each cell shows two pixels, `▀` in the upper one's colour (foreground)
/// over the lower one's (background). Works in every terminal with 24-bit colour, tmux included.
///
/// ```swift
/// let lines = HalfBlockEncoder().encode(image, background: .black).lines  // image.pixelHeight / 2 rows
/// ```
public struct HalfBlockEncoder: TerminalImageEncoding {
    public init() {}

    public func pixelSize(columns: Int, rows: Int, cell: CellSize) -> (width: Int, height: Int) { (columns, rows * 2) }

    public func encode(_ image: Image, background: TerminalColor) -> TerminalPicture {
        var lines: [String] = []
        lines.reserveCapacity((image.pixelHeight + 1) / 2)
        for y in stride(from: 0, to: image.pixelHeight, by: 2) {
            var line = ""
            var foreground: TerminalColor?, backgroundColour: TerminalColor?
            for x in 0..<image.pixelWidth {
                let top = image.composited(x: x, y: y, over: background)
                let bottom = y + 1 < image.pixelHeight ? image.composited(x: x, y: y + 1, over: background) : background
                if top != foreground { line += Self.sgr(38, top); foreground = top }
                if bottom != backgroundColour { line += Self.sgr(48, bottom); backgroundColour = bottom }
                line += "▀"
            }
            lines.append(line + "\u{1B}[0m")
        }
        return TerminalPicture(lines: lines)
    }

    static func sgr(_ code: Int, _ colour: TerminalColor) -> String {
        "\u{1B}[\(code);2;\(colour.red);\(colour.green);\(colour.blue)m"
    }
}
