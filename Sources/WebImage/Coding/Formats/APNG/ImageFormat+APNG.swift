import Foundation

extension ImageFormat {
    /// Whether a PNG stream has an `acTL` chunk before its first `IDAT`: what makes it an APNG.
    ///
    /// Walks chunk headers only (lengths and types, skipping data), at most 64 chunks, so a
    /// large `iCCP` or text chunk before the image data costs nothing.
    static func hasAnimationControl(_ data: some DataProtocol) -> Bool {
        let actl = Array("acTL".utf8), idat = Array("IDAT".utf8)
        var offset = 8
        for _ in 0..<64 {
            guard data.count >= offset + 8 else { return false }
            let start = data.index(data.startIndex, offsetBy: offset)
            let head = Array(data[start..<data.index(start, offsetBy: 8)])
            let type = Array(head[4..<8])
            if type == actl { return true }
            if type == idat { return false }
            let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
            offset += 12 + length
        }
        return false
    }
}
