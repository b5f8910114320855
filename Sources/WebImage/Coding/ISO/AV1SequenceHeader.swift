/// The frame size an AV1 sequence header (AV1 5.5) allows: its maximum frame size, and the bit
/// widths a frame header may use to override it. dav1d trusts a frame header's override up to
/// those widths without comparing it with the maximum, so a frame of a sequence header whose
/// header is not the reduced still-picture one can be as large as `1 << widthBits` a side.
///
/// ```swift
/// AV1SequenceHeader(obu: payload)?.maxWidth  // 1400 for a 1400 × 1400 still image
/// ```
struct AV1SequenceHeader {
    let maxWidth: Int, maxHeight: Int
    let widthBits: Int, heightBits: Int
    let reducedStillPicture: Bool

    static let obuType = 1

    /// The largest frame this sequence can hold, a side at a time.
    var largestWidth: Int { reducedStillPicture ? maxWidth : max(maxWidth, 1 << widthBits) }
    var largestHeight: Int { reducedStillPicture ? maxHeight : max(maxHeight, 1 << heightBits) }

    /// Reads a sequence header OBU's payload (after its OBU header and size).
    init?(obu payload: [UInt8]) {
        var reader = BitReader(payload)
        guard reader.skip(4), let reduced = reader.flag() else { return nil }  // seq_profile, still_picture
        if reduced {
            guard reader.skip(5) else { return nil }  // seq_level_idx[0]
        } else {
            guard Self.skipOperatingPoints(&reader) else { return nil }
        }
        guard let widthBits = reader.bits(4).map({ $0 + 1 }), let heightBits = reader.bits(4).map({ $0 + 1 }),
              let width = reader.bits(widthBits), let height = reader.bits(heightBits) else { return nil }
        (maxWidth, maxHeight) = (width + 1, height + 1)
        (self.widthBits, self.heightBits, reducedStillPicture) = (widthBits, heightBits, reduced)
    }

    /// Reads past the timing, decoder model and operating point fields of a full header.
    private static func skipOperatingPoints(_ reader: inout BitReader) -> Bool {
        guard let timing = reader.flag() else { return false }
        var decoderModel = false, delayLength = 0
        if timing {
            guard reader.skip(64), let equalIntervals = reader.flag() else { return false }
            if equalIntervals, reader.uvlc() == nil { return false }
            guard let model = reader.flag() else { return false }
            decoderModel = model
            if model {
                guard let length = reader.bits(5), reader.skip(32 + 5 + 5) else { return false }
                delayLength = length + 1
            }
        }
        guard let displayDelay = reader.flag(), let points = reader.bits(5) else { return false }
        for _ in 0...points {
            guard reader.skip(12), let level = reader.bits(5) else { return false }
            if level > 7, !reader.skip(1) { return false }
            if decoderModel {
                guard let present = reader.flag() else { return false }
                if present, !reader.skip(2 * delayLength + 1) { return false }
            }
            if displayDelay {
                guard let present = reader.flag() else { return false }
                if present, !reader.skip(4) { return false }
            }
        }
        return true
    }
}
