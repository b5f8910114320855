import Foundation

/// The parts of an ICC profile whose cost LittleCMS does not bound, checked in the profile's
/// bytes before LittleCMS opens it: a profile over a limit is unusable, as one LittleCMS refuses.
///
/// A `multiProcessElementsType` tag (`mpet`: D2Bx, B2Dx) holds any number of stages, each
/// applied at every point LittleCMS samples when it builds a transform; 10,000 stages that all
/// point at one 56-byte matrix make a 435-byte PNG cost 4 s of CPU in its header read, and
/// 100,000 more than a minute, inside LittleCMS where no cancel reaches (red team, stop 51). A
/// segmented curve (`curf`, in a `cvst` stage) is evaluated by walking its segments, up to
/// 65,535. Real profiles use a handful of each.
///
/// ```swift
/// guard ICCProfileLimits.allows(icc) else { return nil }  // then open it with LittleCMS
/// ```
enum ICCProfileLimits {
    /// Stages in one `mpet` tag.
    static let maxStages = 16
    /// Segments in one segmented curve.
    static let maxSegments = 64
    /// Tags LittleCMS reads (its `MAX_TABLE_TAG`); a profile with more is refused there too.
    static let maxTags = 100
    /// Channels of a stage (LittleCMS's `cmsMAXCHANNELS`).
    static let maxChannels = 16

    /// Whether every `mpet` tag and every segmented curve in it is within the limits; a tag
    /// table or an offset that does not fit the bytes is left for LittleCMS to refuse.
    static func allows(_ icc: Data) -> Bool {
        icc.withUnsafeBytes { bytes in
            guard bytes.count >= 132 else { return true }
            let tags = Int(readUInt32(bytes, 128))
            guard tags <= maxTags else { return false }
            for index in 0..<tags {
                let entry = 132 + 12 * index
                guard entry + 12 <= bytes.count else { return true }
                let offset = Int(readUInt32(bytes, entry + 4))
                guard offset <= bytes.count - 16, type(bytes, at: offset) == mpet else { continue }
                if !allowsStages(bytes, tag: offset) { return false }
            }
            return true
        }
    }

    /// The stage count of the `mpet` tag at `tag`, and each `cvst` stage's curves.
    private static func allowsStages(_ bytes: UnsafeRawBufferPointer, tag: Int) -> Bool {
        let stages = Int(readUInt32(bytes, tag + 12))
        guard stages <= maxStages else { return false }
        for stage in 0..<stages {
            let position = tag + 16 + 8 * stage
            guard position + 8 <= bytes.count else { return true }
            let element = tag + Int(readUInt32(bytes, position))
            guard element <= bytes.count - 12, type(bytes, at: element) == cvst else { continue }
            // One curve a channel, and LittleCMS takes at most 16 channels: more is refused here, so
            // that this walk stays at 100 tags × 16 stages × 16 curves whatever the offsets share.
            let curves = Int(readUInt16(bytes, element + 8))
            guard curves <= maxChannels else { return false }
            for curve in 0..<curves {
                let entry = element + 12 + 8 * curve
                guard entry + 8 <= bytes.count else { return true }
                let start = element + Int(readUInt32(bytes, entry))
                guard start <= bytes.count - 12, type(bytes, at: start) == curf else { continue }
                if Int(readUInt16(bytes, start + 8)) > maxSegments { return false }
            }
        }
        return true
    }

    private static func type(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        readUInt32(bytes, offset)
    }

    private static let mpet = fourCC("mpet"), cvst = fourCC("cvst"), curf = fourCC("curf")

    private static func fourCC(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    private static func readUInt32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func readUInt16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }
}
