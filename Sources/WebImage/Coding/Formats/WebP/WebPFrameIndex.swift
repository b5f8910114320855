/// Where an animated WebP's frames are, read once from its `ANMF` chunks, so that each frame is
/// found in constant time. libwebp's demuxer finds frame *n* by walking its frame list from the
/// first — `WebPDemuxGetFrame` and `WebPDemuxNextFrame` alike — so decoding every frame took
/// time that grows with the square of the frames: 3 s for 50,000 one-pixel frames, and far
/// longer for the million a 48 MB file holds (red team, stop 51). The demuxer still opens and
/// checks the whole file first; this index only hands out what it checked.
///
/// A frame whose data is not laid out simply — `VP8L`, or `VP8 ` with an optional `ALPH` before
/// it, right after the 16-byte frame header — is left to the demuxer (`nil`).
struct WebPFrameIndex {
    struct Frame {
        var x: Int, y: Int, width: Int, height: Int
        var milliseconds: Int
        var blends: Bool
        var disposesToBackground: Bool
        /// The frame's bitstream chunks (`ALPH` and `VP8 `, or `VP8L`), headers included, as the
        /// demuxer's `fragment` gives them.
        var fragment: UnsafeRawBufferPointer
        /// What the demuxer says of its alpha; nil: what the bitstream's features say (the same).
        var hasAlpha: Bool? = nil
    }

    /// Top-level chunks besides the frames an animation may have: the demuxer keeps a record of
    /// each chunk it meets, so 6 M empty chunks between two frames (48 MB) held 308 MB (red team,
    /// stop 51). A real file has a handful (`VP8X`, `ICCP`, `ANIM`, `EXIF`, `XMP `).
    static let maxOtherChunks = 4_096

    /// Where each `ANMF` chunk's payload starts, in file order (the demuxer's frame numbers).
    private let starts: [Int]

    /// The frames `container` found in its one walk of the file.
    init(_ container: WebPContainer) {
        starts = container.frameStarts
    }

    /// Frame `index` (0-based), or nil when the index does not know it.
    func frame(_ index: Int, in bytes: UnsafeRawBufferPointer) -> Frame? {
        guard index < starts.count else { return nil }
        let payload = starts[index]
        guard payload + 16 + 8 <= bytes.count else { return nil }
        let flags = bytes[payload + 15]
        var frame = Frame(
            x: 2 * Self.le24(bytes, payload), y: 2 * Self.le24(bytes, payload + 3),
            width: 1 + Self.le24(bytes, payload + 6), height: 1 + Self.le24(bytes, payload + 9),
            milliseconds: Self.le24(bytes, payload + 12), blends: flags & 0x02 == 0, disposesToBackground: flags & 0x01 != 0,
            fragment: UnsafeRawBufferPointer(start: nil, count: 0))
        let start = payload + 16
        let type = Self.fourCC(bytes, start)
        var end = start + 8 + Self.le32(bytes, start + 4)
        if type == Self.alph {
            // The bitstream follows the alpha chunk (and its padding byte); the fragment spans both.
            let next = end + (end & 1)
            guard next + 8 <= bytes.count, Self.fourCC(bytes, next) == Self.vp8 else { return nil }
            end = next + 8 + Self.le32(bytes, next + 4)
        } else {
            guard type == Self.vp8 || type == Self.vp8l else { return nil }
        }
        guard end <= bytes.count else { return nil }
        frame.fragment = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        return frame
    }

    private static let alph = fourCC("ALPH"), vp8 = fourCC("VP8 "), vp8l = fourCC("VP8L")

    private static func fourCC(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    private static func fourCC(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func le24(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
    }

    private static func le32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        le24(bytes, offset) | Int(bytes[offset + 3]) << 24
    }
}
