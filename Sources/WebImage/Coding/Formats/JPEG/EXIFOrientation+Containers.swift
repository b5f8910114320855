public import Foundation

extension EXIFOrientation {
    /// The EXIF orientation in a PNG's `eXIf` chunk, or ``ImageOrientation/up``. Only chunk headers are read on the
    /// way (image data is skipped by its length).
    ///
    /// ```swift
    /// let orientation = EXIFOrientation.read(fromPNG: data)   // .right for a turned phone photo
    /// ```
    public static func read(fromPNG data: Data) -> ImageOrientation {
        data.withUnsafeBytes { raw in readPNG(raw.bindMemory(to: UInt8.self)) }
    }

    private static func readPNG(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageOrientation {
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = PNGChunks.readUInt32(UnsafeRawBufferPointer(bytes), offset + 4)
            guard length <= bytes.count - offset - 12, type != PNGChunks.Types.iend else { return .up }
            if type == PNGChunks.Types.exif { return ImageOrientation(exifValue: orientation(inTIFF: Array(bytes[(offset + 8)..<(offset + 8 + length)])) ?? 1) }
            offset += 12 + length
        }
        return .up
    }

    /// The EXIF orientation in a WebP's `EXIF` chunk (extended format, `VP8X`), or ``ImageOrientation/up``.
    ///
    /// ```swift
    /// let orientation = EXIFOrientation.read(fromWebP: data)
    /// ```
    public static func read(fromWebP data: Data) -> ImageOrientation {
        data.withUnsafeBytes { raw in readWebP(raw.bindMemory(to: UInt8.self)) }
    }

    private static func readWebP(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageOrientation {
        guard bytes.count >= 20, bytes[0..<4].elementsEqual(Array("RIFF".utf8)), bytes[8..<12].elementsEqual(Array("WEBP".utf8)) else { return .up }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            guard size <= bytes.count - offset - 8 else { return .up }
            if bytes[offset..<(offset + 4)].elementsEqual(Array("EXIF".utf8)) {
                return ImageOrientation(exifValue: orientation(inTIFF: Array(bytes[(offset + 8)..<(offset + 8 + size)])) ?? 1)
            }
            offset += 8 + size + (size & 1)
        }
        return .up
    }
}
