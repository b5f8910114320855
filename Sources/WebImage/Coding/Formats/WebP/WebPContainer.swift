import Foundation

/// What the RIFF container of a WebP file says, read without libwebp: enough for a header.
///
/// libwebp refuses canvases of 2³² pixels or more as a bitstream error before we could report
/// them as over the limit, so the `VP8X` canvas and the frame and loop counts are read by walking
/// the chunks here: one pass that keeps a few numbers per frame and nothing per other chunk,
/// looking at the cancel every 4,096 chunks. The metadata readers (EXIF orientation, the ICC
/// profile, loop count) take their chunks from this walk too: each of them walked the chunks
/// again, making a `String` or an `Array` of every chunk type, and a request read them several
/// times (2.5–3 s of CPU for `serve`, debug, on a 48 MB WebP of a million one-pixel frames; stop 52).
struct WebPContainer {
    /// `ANMF` chunks (0 for a still image).
    var frameCount = 0
    /// Each `ANMF` chunk's duration in milliseconds, as stored.
    var durations: [Int] = []
    /// The `ANIM` chunk's loop count (0 = forever); nil without one.
    var loopCount: Int?
    /// The `VP8X` chunk's flags (ICC `0x20`, alpha `0x10`, EXIF `0x08`, XMP `0x04`, animation `0x02`).
    var extendedFlags: UInt8?
    /// The first top-level `EXIF` chunk's payload, when it lies inside the file.
    var exif: Range<Int>?
    /// The first `ICCP` chunk's payload, when it comes before the image data (where libwebp
    /// reads it) and lies inside the file; ``iccpIsTruncated`` when it runs past the end.
    var iccp: Range<Int>?
    var iccpIsTruncated = false
    /// The `VP8X` chunk's canvas size and animation flag, if the file is extended.
    var canvas: (width: Int, height: Int)?
    var isAnimated = false
    /// Whether a lossy `VP8 ` bitstream is in the file (at the top or in an `ANMF` frame); a file
    /// of `VP8L` bitstreams only is lossless.
    var hasLossyBitstream = false
    /// The bytes of the top-level `VP8 `, `VP8L` and `ALPH` chunks (0 for a bare file too short
    /// to say): the still image's coded data, without metadata or padding chunks.
    var imageDataBytes = 0
    /// Where the first top-level `VP8 `, `VP8L` or `ALPH` chunk starts (0 when there is none):
    /// everything before it is chunk headers libwebp parses before any pixel.
    var imageDataOffset = 0
    /// Where each `ANMF` chunk's payload starts, in file order (``WebPFrameIndex``).
    var frameStarts: [Int] = []
    /// Top-level chunks that are not `ANMF` frames.
    var otherChunks = 0
    /// Whether the walk stopped at a cancel (a file can hold millions of empty chunks).
    var isCancelled = false

    init(_ data: Data, frames: Bool = true) {
        self = data.withUnsafeBytes { WebPContainer(walking: $0, frames: frames) }
    }

    /// The container of the file in `bytes`. With `frames: false` (the metadata readers) the
    /// frames are only counted: no ``durations``, ``frameStarts`` or ``hasLossyBitstream`` from
    /// inside them, which cost most of a walk over a million frames.
    init(walking bytes: UnsafeRawBufferPointer, frames: Bool = true) {
        func byte(_ i: Int) -> Int { Int(bytes[i]) }
        var offset = 12
        var chunks = 0, imageSeen = false
        while offset + 8 <= bytes.count {
            chunks += 1
            if chunks & 0xFFF == 0, Task.isCancelled {
                isCancelled = true
                return
            }
            let tag = Self.fourCC(bytes, offset)
            let size = byte(offset + 4) | byte(offset + 5) << 8 | byte(offset + 6) << 16 | byte(offset + 7) << 24
            let payload = offset + 8
            if tag == Self.vp8 { hasLossyBitstream = true }
            let fits = size <= bytes.count - payload
            if tag == Self.exif, exif == nil, fits { exif = payload..<(payload + size) }
            if tag == Self.iccp, !imageSeen, iccp == nil, !iccpIsTruncated {
                if fits { iccp = payload..<(payload + size) } else { iccpIsTruncated = true }
            }
            if tag == Self.anmf || tag == Self.vp8 || tag == Self.vp8l { imageSeen = true }
            if tag == Self.vp8 || tag == Self.vp8l || tag == Self.alph {
                if imageDataBytes == 0 { imageDataOffset = offset }
                imageDataBytes += min(size, max(0, bytes.count - payload))
            }
            if tag != Self.anmf { otherChunks += 1 }
            if tag == Self.anmf {
                frameCount += 1
            }
            if tag == Self.anmf, frames {
                frameStarts.append(payload)
                // The frame's own chunks follow its 16-byte header.
                if Self.containsLossy(bytes, from: payload + 16, to: min(payload + size, bytes.count)) { hasLossyBitstream = true }
                durations.append(payload + 15 <= bytes.count ? byte(payload + 12) | byte(payload + 13) << 8 | byte(payload + 14) << 16 : 0)
            }
            if tag == Self.vp8x, payload + 10 <= bytes.count {
                extendedFlags = bytes[payload]
                isAnimated = byte(payload) & 0x02 != 0
                canvas = (1 + (byte(payload + 4) | byte(payload + 5) << 8 | byte(payload + 6) << 16),
                          1 + (byte(payload + 7) | byte(payload + 8) << 8 | byte(payload + 9) << 16))
            }
            if tag == Self.anim, payload + 6 <= bytes.count {
                loopCount = byte(payload + 4) | byte(payload + 5) << 8
            }
            offset = payload + size + (size & 1)
        }
    }

    // Chunk types as numbers, computed once (a walk compares millions of chunks against them).
    private static let vp8 = type("VP8 "), vp8l = type("VP8L"), alph = type("ALPH"), anmf = type("ANMF")
    private static let vp8x = type("VP8X"), anim = type("ANIM"), exif = type("EXIF"), iccp = type("ICCP")

    private static func type(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    private static func fourCC(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// Whether a `VP8 ` chunk is among the chunks laid out from `from` to `to`.
    private static func containsLossy(_ bytes: UnsafeRawBufferPointer, from: Int, to end: Int) -> Bool {
        var offset = from
        while offset >= 0, offset + 8 <= end {
            if fourCC(bytes, offset) == vp8 { return true }
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            offset = offset + 8 + size + (size & 1)
        }
        return false
    }
}
