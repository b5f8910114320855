public import Foundation

/// A walk over a JPEG's marker segments before the first scan, finding what browsers forgive
/// and strict mode refuses: junk bytes where a marker belongs, a segment running past the end
/// of the data, a short APP14 `Adobe` segment, an unreadable EXIF block, JFIF density oddities.
///
/// Fill bytes (any number of `FF` before a marker) are legal (ITU-T T.81 B.1.1.2) and accepted
/// in both modes. libjpeg itself skips junk (with a warning) and ignores the malformed segments;
/// this walk only reports them.
///
/// ```swift
/// let found = JPEGMarkerScan.repairs(in: data)   // e.g. [.junkBytes, .damagedMetadata]
/// ```
public enum JPEGMarkerScan {
    public static func repairs(in data: Data) -> ImageRepairs {
        data.withUnsafeBytes { raw in scan(raw.bindMemory(to: UInt8.self)) }
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageRepairs {
        var found: ImageRepairs = []
        var i = 2  // after SOI
        var segments = 0
        while i < bytes.count {
            // A cancelled decode stops here, then throws `.cancelled` (JPEGCoder.decode).
            segments += 1
            if segments & 0xFFF == 0, Task.isCancelled { return found }
            guard bytes[i] == 0xFF else {
                found.insert(.junkBytes)
                i += 1
                continue
            }
            while i < bytes.count, bytes[i] == 0xFF { i += 1 }  // fill bytes
            guard i < bytes.count else { return found.union(.truncated) }
            let marker = bytes[i]
            i += 1
            if marker == 0x00 { found.insert(.junkBytes); continue }  // a stuffed FF00 outside entropy data
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }  // stand-alone markers
            if marker == 0xD9 { return found }  // EOI before any scan
            guard i + 2 <= bytes.count else { return found.union(.truncated) }
            let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            guard length >= 2 else { return found.union(.damagedMetadata) }
            guard i + length <= bytes.count else { return found.union(.truncated) }
            let segment = UnsafeBufferPointer(rebasing: bytes[(i + 2)..<(i + length)])
            if !isWellFormed(marker: marker, segment) { found.insert(.damagedMetadata) }
            if marker == 0xDA { return found }  // start of scan: entropy-coded data follows
            i += length
        }
        return found.union(.truncated)
    }

    private static func isWellFormed(marker: UInt8, _ s: UnsafeBufferPointer<UInt8>) -> Bool {
        func starts(_ text: String) -> Bool { s.starts(with: Array(text.utf8)) }
        switch marker {
        case 0xE0 where starts("JFIF\0"):
            // version, units (0–2), x and y density (non-zero): 14 bytes in all.
            guard s.count >= 14 else { return false }
            let units = s[7], xDensity = Int(s[8]) << 8 | Int(s[9]), yDensity = Int(s[10]) << 8 | Int(s[11])
            return s[5] == 1 && units <= 2 && xDensity > 0 && yDensity > 0
        case 0xEE where starts("Adobe"):
            return s.count >= 12  // "Adobe", version, flags0, flags1, transform
        case 0xE1 where starts("Exif\0\0"):
            let tiff = Array(s.dropFirst(6))
            guard tiff.count >= 8 else { return false }
            let little = tiff[0] == 0x49 && tiff[1] == 0x49 && tiff[2] == 0x2A && tiff[3] == 0
            let big = tiff[0] == 0x4D && tiff[1] == 0x4D && tiff[2] == 0 && tiff[3] == 0x2A
            guard little || big else { return false }
            let offset = little
                ? Int(tiff[4]) | Int(tiff[5]) << 8 | Int(tiff[6]) << 16 | Int(tiff[7]) << 24
                : Int(tiff[4]) << 24 | Int(tiff[5]) << 16 | Int(tiff[6]) << 8 | Int(tiff[7])
            return offset >= 8 && offset + 2 <= tiff.count
        default:
            return true
        }
    }
}
