import Foundation

/// What the RIFF container of a WebP file says, read without libwebp: enough for a header.
///
/// libwebp refuses canvases of 2³² pixels or more as a bitstream error before we could report
/// them as over the limit, so the `VP8X` canvas and the frame and loop counts are read by walking
/// the chunks here.
struct WebPContainer {
    /// `ANMF` chunks (0 for a still image).
    var frameCount = 0
    /// Each `ANMF` chunk's duration in milliseconds, as stored.
    var durations: [Int] = []
    /// The `ANIM` chunk's loop count (0 = forever).
    var loopCount = 0
    /// The `VP8X` chunk's canvas size and animation flag, if the file is extended.
    var canvas: (width: Int, height: Int)?
    var isAnimated = false
    /// Whether a lossy `VP8 ` bitstream is in the file (at the top or in an `ANMF` frame); a file
    /// of `VP8L` bitstreams only is lossless.
    var hasLossyBitstream = false
    /// The bytes of the top-level `VP8 `, `VP8L` and `ALPH` chunks (0 for a bare file too short
    /// to say): the still image's coded data, without metadata or padding chunks.
    var imageDataBytes = 0

    init(_ data: Data) {
        let bytes = data
        let start = data.startIndex  // `data` may be a slice
        func byte(_ i: Int) -> Int { Int(bytes[start + i]) }
        var offset = 12
        while offset + 8 <= bytes.count {
            let tag = String(decoding: bytes[(start + offset)..<(start + offset + 4)], as: UTF8.self)
            let size = byte(offset + 4) | byte(offset + 5) << 8 | byte(offset + 6) << 16 | byte(offset + 7) << 24
            let payload = offset + 8
            if tag == "VP8 " { hasLossyBitstream = true }
            if tag == "VP8 " || tag == "VP8L" || tag == "ALPH" { imageDataBytes += min(size, max(0, bytes.count - payload)) }
            if tag == "ANMF" {
                frameCount += 1
                // The frame's own chunks follow its 16-byte header.
                if Self.containsLossy(bytes, from: payload + 16, to: min(payload + size, bytes.count)) { hasLossyBitstream = true }
                durations.append(payload + 15 <= bytes.count ? byte(payload + 12) | byte(payload + 13) << 8 | byte(payload + 14) << 16 : 0)
            }
            if tag == "VP8X", payload + 10 <= bytes.count {
                isAnimated = byte(payload) & 0x02 != 0
                canvas = (1 + (byte(payload + 4) | byte(payload + 5) << 8 | byte(payload + 6) << 16),
                          1 + (byte(payload + 7) | byte(payload + 8) << 8 | byte(payload + 9) << 16))
            }
            if tag == "ANIM", payload + 6 <= bytes.count {
                loopCount = byte(payload + 4) | byte(payload + 5) << 8
            }
            offset = payload + size + (size & 1)
        }
    }

    /// Whether a `VP8 ` chunk is among the chunks laid out from `from` to `to`.
    private static func containsLossy(_ data: Data, from: Int, to end: Int) -> Bool {
        let start = data.startIndex
        func byte(_ i: Int) -> Int { Int(data[start + i]) }
        var offset = from
        while offset >= 0, offset + 8 <= end {
            if data[(start + offset)..<(start + offset + 4)].elementsEqual("VP8 ".utf8) { return true }
            let size = byte(offset + 4) | byte(offset + 5) << 8 | byte(offset + 6) << 16 | byte(offset + 7) << 24
            offset = offset + 8 + size + (size & 1)
        }
        return false
    }
}
