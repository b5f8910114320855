/// Checks, before libheif or libavif decode anything, that each coded item a decode of the
/// primary image reads (the primary, its alpha and other auxiliary images, their grid tiles and
/// overlay layers) is coded at the size it declares (`ispe`), and holds one picture.
///
/// The libraries price a decode by the declared sizes, but the codecs allocate and work at the
/// coded ones (red team, stops 52–53): 484 grid tiles declared 64 × 64 but coded 1400 × 1400
/// (23 KB) took 3.3 GB in libavif, and 7–9 s of CPU in libheif (AV1 or HEVC tiles); and libde265
/// decodes every picture in an item's data although libheif keeps one (fifty 1400 × 1400
/// pictures in 34 KB, 0.4 s; two thousand items of them, minutes). So:
/// - an HEVC item's sequence parameter sets (in `hvcC` and in its data) and an AV1 item's
///   sequence headers (in `av1C` and in its data) may not exceed the declared size by more than
///   ``slack`` pixels a side (HEVC codes whole 8-pixel blocks and crops; AV1 codes the size
///   itself). Through libheif an AV1 frame may override its sequence's size up to the header's
///   bit widths, which count too, at twice the declared size (encoders use the fewest bits);
/// - an HEVC item's data may start one picture.
///
/// ```swift
/// try ISOCodedItemCheck.check(bytes, meta: ISOMeta(bytes), format: .heic, throughLibheif: true)
/// ```
enum ISOCodedItemCheck {
    /// Pixels a side a coded size may exceed the declared one by.
    static let slack = 64
    /// Coded units (NAL units, OBUs) read in one file before it is refused.
    static let maxUnits = 1 << 20

    static func check(
        _ bytes: UnsafeRawBufferPointer, meta: ISOMeta, format: ImageFormat, throughLibheif: Bool
    ) throws(ImageDecodingError) {
        var codings: [[Range<Int>]: Coding] = [:], units = 0
        for id in meta.decodedItems where meta.isCoded(id) {
            guard let item = meta.items[id], let declared = meta.declaredSize(of: id, in: bytes) else { continue }
            let hevc = item.type == hvc1, av1 = item.type == av01
            guard hevc || av1 else { continue }
            guard let extents = item.extents else {
                throw .corrupt(format: format, reason: "item \(id)'s data cannot be located (over \(ISOMeta.maxExtents) extents, or outside the file)")
            }
            let configuration = meta.property(hevc ? hvcC : av1C, of: id)
            let key = (configuration.map { [$0] } ?? [0..<0]) + extents
            let coded: Coding
            if let known = codings[key] {
                coded = known
            } else {
                coded = hevc
                    ? try hevcCoding(bytes, configuration: configuration, data: extents, units: &units, format: format)
                    : try av1Coding(bytes, configuration: configuration, data: extents, units: &units, format: format, throughLibheif: throughLibheif)
                codings[key] = coded
            }
            if hevc, coded.pictures > 1 {
                throw .corrupt(format: format, reason: "item \(id) holds \(coded.pictures) pictures; an image item holds one")
            }
            let allowed = (width: declared.width + slack, height: declared.height + slack)
            let overrideAllowed = (width: 2 * allowed.width, height: 2 * allowed.height)
            if coded.width > allowed.width || coded.height > allowed.height
                || coded.overrideWidth > overrideAllowed.width || coded.overrideHeight > overrideAllowed.height {
                throw .corrupt(
                    format: format,
                    reason: "item \(id) is coded at up to \(max(coded.width, coded.overrideWidth)) × \(max(coded.height, coded.overrideHeight)) but declares \(declared.width) × \(declared.height)")
            }
        }
    }

    /// The largest area a coded item read for the primary image declares, when the primary is
    /// derived from others (a grid or an overlay): libavif gives this limit to each tile's dav1d,
    /// which then refuses a frame larger than any tile may be before allocating it (libavif's own
    /// limit is the whole grid's).
    static func largestTileArea(_ bytes: UnsafeRawBufferPointer, meta: ISOMeta) -> Int? {
        guard let primary = meta.primary, !meta.isCoded(primary) else { return nil }
        let areas = meta.decodedItems.filter(meta.isCoded).compactMap { id -> Int? in
            guard let size = meta.declaredSize(of: id, in: bytes) else { return nil }
            let (area, overflow) = size.width.multipliedReportingOverflow(by: size.height)
            return overflow ? Int.max : area
        }
        return areas.max()
    }

    /// What an item's units code: the largest size, the largest override size (AV1 through
    /// libheif), and the pictures started (HEVC).
    struct Coding {
        var width = 0, height = 0, overrideWidth = 0, overrideHeight = 0, pictures = 0
    }

    static func count(_ units: inout Int, _ format: ImageFormat) throws(ImageDecodingError) {
        units += 1
        guard units <= maxUnits else { throw .corrupt(format: format, reason: "more than \(maxUnits) coded units in the items") }
        if units & 0xFFF == 0, Task.isCancelled { throw .cancelled }
    }

    /// An HEVC item: `hvcC`'s arrays of units, then the data's units (each after a 4-byte
    /// length, as libheif reads them whatever `hvcC` says).
    private static func hevcCoding(
        _ bytes: UnsafeRawBufferPointer, configuration: Range<Int>?, data: [Range<Int>], units: inout Int, format: ImageFormat
    ) throws(ImageDecodingError) -> Coding {
        var coding = Coding()
        func look(_ unit: ISOItemBytes, at start: Int, length: Int) {
            guard let header = unit[start] else { return }
            if HEVCParameterSets.type(header) == HEVCParameterSets.spsType {
                if let size = HEVCParameterSets.lumaSize(ofSPS: unit.prefix(from: start, limit: min(length, 256))) {
                    coding.width = max(coding.width, size.width)
                    coding.height = max(coding.height, size.height)
                }
            } else if HEVCParameterSets.startsPicture(unit.prefix(from: start, limit: min(length, 3))) {
                coding.pictures += 1
            }
        }
        if let configuration, configuration.count > 23 {
            let config = ISOItemBytes(bytes, [configuration])
            var offset = 23
            for _ in 0..<(config[22].map(Int.init) ?? 0) {
                guard let count = config.bigEndian(at: offset + 1, count: 2) else { break }
                offset += 3
                for _ in 0..<count {
                    try Self.count(&units, format)
                    guard let length = config.bigEndian(at: offset, count: 2), length <= config.count - offset - 2 else { break }
                    look(config, at: offset + 2, length: length)
                    offset += 2 + length
                }
            }
        }
        let items = ISOItemBytes(bytes, data)
        var offset = 0
        while let length = items.bigEndian(at: offset, count: 4), length <= items.count - offset - 4 {
            try Self.count(&units, format)
            look(items, at: offset + 4, length: length)
            offset += 4 + length
        }
        return coding
    }
}
