public import WebImage
import Foundation

/// The kitty graphics protocol (kitty, Ghostty, WezTerm, Konsole): the pixels sent as 32-bit
/// RGBA (straight alpha, so the terminal blends), base64 in chunks of 4096 characters, placed
/// at the cursor. The image id lets the next frame or page replace the picture in place.
///
/// ```swift
/// let picture = KittyEncoder(imageID: 7).encode(image, background: .black)
/// ```
public struct KittyEncoder: TerminalImageEncoding {
    /// The id the picture is transmitted under; a later picture with the same id replaces it.
    public var imageID: UInt32

    public init(imageID: UInt32 = 1) { self.imageID = imageID }

    public func pixelSize(columns: Int, rows: Int, cell: CellSize) -> (width: Int, height: Int) {
        (columns * cell.width, rows * cell.height)
    }

    public func encode(_ image: Image, background: TerminalColor) -> TerminalPicture {
        var straight = [UInt8](repeating: 0, count: image.pixelWidth * image.pixelHeight * 4)
        let pixels = image.pixels, bytesPerRow = image.bytesPerRow
        for y in 0..<image.pixelHeight {
            for x in 0..<image.pixelWidth {
                let i = y * bytesPerRow + x * 4, o = (y * image.pixelWidth + x) * 4
                let alpha = Int(pixels[i + 3])
                for c in 0..<3 {
                    straight[o + c] = alpha == 0 ? 0 : UInt8(min(255, (Int(pixels[i + c]) * 255 + alpha / 2) / alpha))
                }
                straight[o + 3] = UInt8(alpha)
            }
        }
        let payload = Data(straight).base64EncodedString()
        // Delete the previous picture of this id (and free its data), then transmit and place.
        var out = "\u{1B}_Ga=d,d=I,i=\(imageID),q=2\u{1B}\\"
        var start = payload.startIndex
        var first = true
        repeat {
            let end = payload.index(start, offsetBy: 4096, limitedBy: payload.endIndex) ?? payload.endIndex
            let more = end < payload.endIndex ? 1 : 0
            let control = first
                ? "a=T,f=32,s=\(image.pixelWidth),v=\(image.pixelHeight),i=\(imageID),q=2,C=1,m=\(more)" : "m=\(more)"
            out += "\u{1B}_G\(control);\(payload[start..<end])\u{1B}\\"
            start = end
            first = false
        } while start < payload.endIndex
        return TerminalPicture(lines: [out])
    }
}
