public import Foundation

extension EXIFOrientation {
    /// The EXIF orientation in a PNG's `eXIf` chunk, or ``ImageOrientation/up``. Only chunk headers are read on the
    /// way (image data is skipped by its length).
    ///
    /// ```swift
    /// let orientation = EXIFOrientation.read(fromPNG: data)   // .right for a turned phone photo
    /// ```
    public static func read(fromPNG data: Data) -> ImageOrientation {
        data.withUnsafeBytes { readPNG($0) }
    }

    private static func readPNG(_ raw: UnsafeRawBufferPointer) -> ImageOrientation {
        var found = ImageOrientation.up
        PNGChunks.walkHeaders(raw) { type, _, data in
            guard type == PNGChunks.Types.exif else { return true }
            found = ImageOrientation(exifValue: orientation(inTIFF: Array(raw[data])) ?? 1)
            return false
        }
        return found
    }

    /// The EXIF orientation in a WebP's `EXIF` chunk (extended format, `VP8X`), or ``ImageOrientation/up``.
    ///
    /// ```swift
    /// let orientation = EXIFOrientation.read(fromWebP: data)
    /// ```
    public static func read(fromWebP data: Data) -> ImageOrientation {
        data.withUnsafeBytes { raw in
            guard raw.count >= 20, raw[0..<4].elementsEqual("RIFF".utf8), raw[8..<12].elementsEqual("WEBP".utf8) else { return .up }
            return orientation(inWebP: raw, exif: WebPContainer(walking: raw, frames: false).exif)
        }
    }

    /// The orientation in the `EXIF` chunk a ``WebPContainer`` walk found in `raw`.
    static func orientation(inWebP raw: UnsafeRawBufferPointer, exif: Range<Int>?) -> ImageOrientation {
        guard let exif else { return .up }
        return ImageOrientation(exifValue: orientation(inTIFF: Array(raw[exif])) ?? 1)
    }
}
