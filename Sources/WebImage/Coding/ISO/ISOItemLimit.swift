/// The item count of a HEIF-family file (HEIC, HEIF, AVIF), read from its `meta` box before
/// libheif or libavif parse it: both take time that grows with the square of the items (libheif
/// 1.15 in its context parse, libavif 0.11 in its item look-ups), so 10,000 items that all share
/// the primary image's data — a 560 KB HEIC — cost 7 s of CPU in the header read and 17 s in the
/// decode, in C where no deadline reaches (red team, stop 51). A camera's or a phone's file has
/// tens to a few hundred items (grid tiles, thumbnails, gain maps, metadata).
///
/// References and properties count too (red team, stop 52): libheif decodes an item once for
/// each reference to it, so an overlay or a grid of 65,535 references to one image (a 394 KB
/// HEIC) would take 27 minutes; and it applies every transform property an item lists (250
/// rotations and mirrors on a grid: over a minute). The references in `iref` count against
/// ``maxItems``, and an item may list at most ``maxProperties`` properties in `ipma` (a real
/// one lists ten or so: size, codec configuration, colour, pixel depth, a rotation, a mirror,
/// a crop). ``hasDerivedImages(_:)`` tells a grid or an overlay: libavif gives each grid tile a
/// decoder that may take the whole grid's size, whatever the tile declares.
///
/// ```swift
/// try ISOItemLimit.check(bytes, format: .heic)  // .corrupt when the file declares over 2,000 items
/// ```
enum ISOItemLimit {
    /// Items a file may declare, in `iinf`, `iloc` or `ipma`.
    static let maxItems = 2_000
    /// Properties one item may list in `ipma`.
    static let maxProperties = 32
    /// References to one item (grids and overlays made by cameras and encoders reference each
    /// tile once; an overlay of 1,000 references to one 1400 × 1400 image took 25 s).
    static let maxRepeatedReferences = 64

    static func check(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws(ImageDecodingError) {
        let items = count(bytes)
        if Task.isCancelled { throw .cancelled }
        guard items <= maxItems else {
            throw .corrupt(format: format, reason: "the file declares \(items) items or references, more than \(maxItems)")
        }
        let repeated = mostRepeatedReference(bytes)
        guard repeated <= maxRepeatedReferences else {
            throw .corrupt(format: format, reason: "one item is referenced \(repeated) times, more than \(maxRepeatedReferences)")
        }
        let properties = mostProperties(bytes)
        guard properties <= maxProperties else {
            throw .corrupt(format: format, reason: "an item lists \(properties) properties, more than \(maxProperties)")
        }
    }

    /// Whether the file has a derived image (a `dimg` reference: a grid or an overlay).
    static func hasDerivedImages(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var found = false
        ISOBoxes.forEachMetaChild(bytes) { type, body in
            guard type == iref, body.count >= 4 else { return }
            ISOBoxes.forEachBox(bytes, in: (body.lowerBound + 4)..<body.upperBound) { type, _ in if type == dimg { found = true } }
        }
        return found
    }

    /// The most properties an `ipma` entry associates with one item.
    static func mostProperties(_ bytes: UnsafeRawBufferPointer) -> Int {
        var most = 0
        ISOBoxes.forEachMetaChild(bytes) { type, body in
            guard type == iprp else { return }
            ISOBoxes.forEachBox(bytes, in: body) { type, body in
                guard type == ipma, body.count >= 8 else { return }
                let wideIDs = bytes[body.lowerBound] >= 1, wideIndices = bytes[body.lowerBound + 3] & 1 != 0
                let entries = min(entryCount(bytes, body, wide: true), maxItems)
                var offset = body.lowerBound + 8
                for _ in 0..<entries {
                    let countAt = offset + (wideIDs ? 4 : 2)
                    guard countAt < body.upperBound else { return }
                    let associations = Int(bytes[countAt])
                    most = max(most, associations)
                    offset = countAt + 1 + associations * (wideIndices ? 2 : 1)
                }
            }
        }
        return most
    }

    /// The largest entry count of the `iinf`, `iloc` and `ipma` boxes under the top-level
    /// `meta` boxes (0 when there are none, or when the boxes do not fit: the libraries judge
    /// those).
    static func count(_ bytes: UnsafeRawBufferPointer) -> Int {
        var largest = 0
        ISOBoxes.forEachMetaChild(bytes) { type, body in
            if type == iref, body.count >= 4 {
                largest = max(largest, references(bytes, in: body))
            } else if type == iprp {
                ISOBoxes.forEachBox(bytes, in: body) { type, body in
                    if type == ipma { largest = max(largest, entryCount(bytes, body, wide: true)) }
                }
            } else if type == iinf, body.count >= 4 {
                largest = max(largest, entryCount(bytes, body, wide: bytes[body.lowerBound] != 0))
            } else if type == iloc, body.count >= 6 {
                // After the version and flags, two bytes of field sizes, then the count.
                let wide = bytes[body.lowerBound] >= 2
                largest = max(largest, entryCount(bytes, (body.lowerBound + 2)..<body.upperBound, wide: wide))
            }
        }
        return largest
    }

    /// How many times the most referenced item is referenced, over every `iref` entry (called
    /// once the references are known to be at most ``maxItems``).
    static func mostRepeatedReference(_ bytes: UnsafeRawBufferPointer) -> Int {
        var counts: [UInt32: Int] = [:]
        ISOBoxes.forEachMetaChild(bytes) { type, body in
            guard type == iref, body.count >= 4 else { return }
            let idBytes = bytes[body.lowerBound] >= 1 ? 4 : 2
            ISOBoxes.forEachBox(bytes, in: (body.lowerBound + 4)..<body.upperBound) { _, entry in
                var offset = entry.lowerBound + idBytes
                guard entry.upperBound - offset >= 2 else { return }
                let references = min(Int(bytes[offset]) << 8 | Int(bytes[offset + 1]), maxItems)
                offset += 2
                for _ in 0..<references where entry.upperBound - offset >= idBytes {
                    let id = (offset..<(offset + idBytes)).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[$1]) }
                    counts[id, default: 0] += 1
                    offset += idBytes
                }
            }
        }
        return counts.values.max() ?? 0
    }

    /// The references an `iref` box lists, over all its entries (each: from-item, a 16-bit
    /// count, then the to-items; item IDs of 32 bits in version 1).
    private static func references(_ bytes: UnsafeRawBufferPointer, in body: Range<Int>) -> Int {
        let idBytes = bytes[body.lowerBound] >= 1 ? 4 : 2
        var total = 0
        ISOBoxes.forEachBox(bytes, in: (body.lowerBound + 4)..<body.upperBound) { _, entry in
            let countAt = entry.lowerBound + idBytes
            guard entry.upperBound - countAt >= 2 else { return }
            total += Int(bytes[countAt]) << 8 | Int(bytes[countAt + 1])
        }
        return total
    }

    /// A full box's count after its version and flags: 16 bits, or 32 when `wide`.
    private static func entryCount(_ bytes: UnsafeRawBufferPointer, _ body: Range<Int>, wide: Bool) -> Int {
        let start = body.lowerBound + 4
        guard body.upperBound - start >= (wide ? 4 : 2) else { return 0 }
        let high = Int(bytes[start]) << 8 | Int(bytes[start + 1])
        return wide ? high << 16 | Int(bytes[start + 2]) << 8 | Int(bytes[start + 3]) : high
    }

    private static let iprp = fourCC("iprp"), ipma = fourCC("ipma"), iinf = fourCC("iinf"), iloc = fourCC("iloc")
    private static let iref = fourCC("iref"), dimg = fourCC("dimg")
    private static func fourCC(_ name: StaticString) -> UInt32 { ISOBoxes.fourCC(name) }
}
