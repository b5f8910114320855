public import WebImage
import Foundation

/// iTerm2's inline images (iTerm2, WezTerm, mintty): the picture as a PNG, base64, in one
/// `OSC 1337 ; File=` sequence, shown at its pixel size.
///
/// ```swift
/// let picture = ITermEncoder().encode(image, background: .black)
/// ```
public struct ITermEncoder: TerminalImageEncoding {
    public init() {}

    public func pixelSize(columns: Int, rows: Int, cell: CellSize) -> (width: Int, height: Int) {
        (columns * cell.width, rows * cell.height)
    }

    public func encode(_ image: Image, background: TerminalColor) -> TerminalPicture {
        guard let png = try? PNGCoder().encode(image, as: .png, quality: 1) else { return TerminalPicture(lines: []) }
        let arguments = "inline=1;size=\(png.count);width=\(image.pixelWidth)px;height=\(image.pixelHeight)px;preserveAspectRatio=1"
        return TerminalPicture(lines: ["\u{1B}]1337;File=\(arguments):\(png.base64EncodedString())\u{07}"])
    }
}
