public import Foundation

/// Reads the EXIF orientation tag (0x0112) from a JPEG's APP1 segment.
///
/// Only the marker segments before the first scan are read; any malformed structure yields
/// ``ImageOrientation/up`` ("as stored"), never an error: orientation is advisory.
public enum EXIFOrientation {
    public static func read(fromJPEG data: Data) -> ImageOrientation {
        // Walked in place: the first 64 KB were copied into an array for every decode, twice per
        // rendered request (the server's size planning reads it too).
        data.withUnsafeBytes { raw -> ImageOrientation in
            let bytes = UnsafeRawBufferPointer(rebasing: raw.prefix(65_536 + 4))
            var i = 2
            while i + 4 <= bytes.count, bytes[i] == 0xFF {
                let marker = bytes[i + 1]
                let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                if marker == 0xDA || length < 2 { break }  // start of scan
                if marker == 0xE1, i + 2 + length <= bytes.count {
                    let segment = Array(bytes[(i + 4)..<(i + 2 + length)])
                    if let value = orientation(inEXIF: segment) { return ImageOrientation(exifValue: value) }
                }
                i += 2 + length
            }
            return .up
        }
    }

    private static func orientation(inEXIF s: [UInt8]) -> Int? {
        guard s.count > 14, s[0...5].elementsEqual(Array("Exif".utf8) + [0, 0]) else { return nil }
        return orientation(inTIFF: Array(s[6...]))
    }

    /// The orientation in a TIFF-structured EXIF block (byte order mark first), as PNG `eXIf`
    /// and WebP `EXIF` chunks hold it; some writers put JPEG's `Exif\0\0` in front, which is skipped.
    static func orientation(inTIFF block: [UInt8]) -> Int? {
        let tiff = block.starts(with: Array("Exif".utf8) + [0, 0]) ? Array(block.dropFirst(6)) : block
        guard tiff.count >= 8 else { return nil }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[o]) | Int(tiff[o + 1]) << 8 : Int(tiff[o]) << 8 | Int(tiff[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let hi = u16(little ? o + 2 : o), let lo = u16(little ? o : o + 2) else { return nil }
            return hi << 16 | lo
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<min(count, 256) {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112, let value = u16(at + 8), (1...8).contains(value) { return value }
        }
        return nil
    }
}
