extension Image {
    /// The pixels turned the way the EXIF ``orientation`` says the picture is meant to be seen,
    /// with ``orientation`` 1. Images already at 1 are returned unchanged.
    ///
    /// Decoders report orientation without applying it (see ``Image``); apply it before writing a
    /// file that will not carry the EXIF tag, such as a re-encoded thumbnail.
    ///
    /// ```swift
    /// let upright = try ImageCoderRegistry.default.decode(photo).oriented()
    /// ```
    public func oriented() -> Image {
        guard (2...8).contains(orientation) else { return self }
        let swapsSides = orientation >= 5
        let width = swapsSides ? pixelHeight : pixelWidth, height = swapsSides ? pixelWidth : pixelHeight
        var result = self
        result.pixels = Self.reorient(pixels, bytesPerRow: bytesPerRow, width: pixelWidth, height: pixelHeight, orientation: orientation)
        result.frames = frames.enumerated().map { index, frame in
            ImageFrame(
                pixels: index == 0 ? result.pixels : Self.reorient(
                    frame.pixels, bytesPerRow: pixelWidth * 4, width: pixelWidth, height: pixelHeight, orientation: orientation),
                duration: frame.duration)
        }
        result.pixelWidth = width
        result.pixelHeight = height
        result.bytesPerRow = width * 4
        result.orientation = 1
        return result
    }

    /// Packed RGBA of the displayed picture: each displayed pixel fetched from its stored place.
    private static func reorient(
        _ pixels: [UInt8], bytesPerRow: Int, width w: Int, height h: Int, orientation: Int
    ) -> [UInt8] {
        let swapsSides = orientation >= 5
        let outWidth = swapsSides ? h : w, outHeight = swapsSides ? w : h
        var out = [UInt8](repeating: 0, count: outWidth * outHeight * 4)
        for dy in 0..<outHeight {
            for dx in 0..<outWidth {
                let (sx, sy): (Int, Int) = switch orientation {
                case 2: (w - 1 - dx, dy)
                case 3: (w - 1 - dx, h - 1 - dy)
                case 4: (dx, h - 1 - dy)
                case 5: (dy, dx)
                case 6: (dy, h - 1 - dx)
                case 7: (w - 1 - dy, h - 1 - dx)
                default: (w - 1 - dy, dx)  // 8
                }
                let s = sy * bytesPerRow + sx * 4, d = (dy * outWidth + dx) * 4
                out[d] = pixels[s]; out[d + 1] = pixels[s + 1]; out[d + 2] = pixels[s + 2]; out[d + 3] = pixels[s + 3]
            }
        }
        return out
    }
}
