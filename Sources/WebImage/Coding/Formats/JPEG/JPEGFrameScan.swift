import Foundation

/// What a JPEG's frame header (SOF) says about the memory libjpeg holds whatever the output
/// size: a progressive file (SOF2, SOF6, SOF10, SOF14) is decoded through a buffer of every
/// DCT coefficient of the whole image, 2 bytes a sample per component — about 390 MB for a
/// 49 MP CMYK file even when the output is 10 pixels wide. A red-team review found such files
/// priced at their output's size; their decodes then took twice the budget.
///
/// ```swift
/// let held = JPEGFrameScan.coefficientBytes(in: data)   // 0 for a baseline file
/// ```
enum JPEGFrameScan {
    /// Bytes of libjpeg's whole-image coefficient buffer for `data` (width × height ×
    /// components × 2, saturating), or 0 when the file is not progressive or has no readable
    /// frame header before its first scan.
    static func coefficientBytes(in data: Data) -> Int {
        data.withUnsafeBytes { raw -> Int in
            let bytes = raw.bindMemory(to: UInt8.self)
            var i = 2  // after SOI
            var segments = 0
            while i + 4 <= bytes.count {
                guard bytes[i] == 0xFF else { i += 1; continue }  // junk: libjpeg skips it too
                // Millions of empty segments are a few bytes each: a cancelled header read stops.
                segments += 1
                if segments & 0xFFF == 0, Task.isCancelled { return 0 }
                while i < bytes.count, bytes[i] == 0xFF { i += 1 }
                guard i + 3 <= bytes.count else { return 0 }
                let marker = bytes[i]
                i += 1
                if marker == 0x00 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
                if marker == 0xD9 || marker == 0xDA { return 0 }  // EOI or the first scan: no progressive frame
                let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
                guard length >= 2 else { return 0 }
                if marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE {  // no array a segment
                    // P, Y (2 bytes), X (2 bytes), Nf.
                    guard i + 8 <= bytes.count else { return 0 }
                    let height = Int(bytes[i + 3]) << 8 | Int(bytes[i + 4])
                    let width = Int(bytes[i + 5]) << 8 | Int(bytes[i + 6])
                    let components = Int(bytes[i + 7])
                    return width * height * max(components, 1) * 2  // at most 65535² × 255 × 2: no overflow
                }
                if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC { return 0 }  // another frame type
                i += length
            }
            return 0
        }
    }
}
