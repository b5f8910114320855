/// What a HEIF-family file (HEIC, HEIF, AVIF) says about its items, read from its `meta` box
/// before libheif or libavif see it: each item's type, properties, data and references, and the
/// primary item. Made only after ``ISOItemLimit/check(_:format:)`` has passed, so every table
/// is bounded; a box that does not fit ends its part of the walk (the libraries judge those).
///
/// The size checks of coded items (``ISOCodedItemCheck``) use it to find which items a decode
/// reads and what each one declares.
///
/// ```swift
/// let meta = ISOMeta(bytes)
/// for id in meta.decodedItems where meta.isCoded(id) { print(meta.declaredSize(of: id) ?? (0, 0)) }
/// ```
struct ISOMeta {
    struct Item {
        var type: UInt32 = 0
        /// Indices into ``properties`` (from 0).
        var properties: [Int] = []
        /// Where the item's data lies in the file, in order; `nil` when it is elsewhere (another
        /// file, another item) or the location does not fit.
        var extents: [Range<Int>]? = []
    }

    private(set) var primary: UInt32?
    private(set) var items: [UInt32: Item] = [:]
    /// The `ipco` children in order: type and contents.
    private(set) var properties: [(type: UInt32, body: Range<Int>)] = []
    /// Each `iref` entry: type, from-item, to-items.
    private(set) var references: [(type: UInt32, from: UInt32, to: [UInt32])] = []

    /// Extents one item may have (a real file's items have one; libheif copies each).
    static let maxExtents = 64

    /// Item IDs that derive from others (`dimg` from them): grids, overlays, identity transforms.
    private var derived: Set<UInt32> = []

    /// Reads the first box of each kind, as libheif does: a file of a million `ipma` or `iref`
    /// boxes is read once, not merged into tables a million times over.
    init(_ bytes: UnsafeRawBufferPointer) {
        var locations: [(id: UInt32, method: Int, extents: [(offset: Int, length: Int)])] = []
        var idat: Range<Int>?
        var seen: Set<UInt32> = []
        ISOBoxes.forEachMetaChild(bytes) { type, body in
            guard seen.insert(type).inserted else { return }
            var reader = ISOReader(bytes, body)
            switch type {
            case Self.pitm where primary == nil:
                let version = reader.u8() ?? 0
                reader.skip(3)
                primary = reader.uint(version == 0 ? 2 : 4).map(UInt32.init(truncatingIfNeeded:))
            case Self.iinf:
                let version = reader.u8() ?? 0
                reader.skip(3 + (version == 0 ? 2 : 4))
                ISOBoxes.forEachBox(bytes, in: reader.rest) { type, body in
                    guard type == Self.infe else { return }
                    var entry = ISOReader(bytes, body)
                    guard let version = entry.u8(), version >= 2 else { return }
                    entry.skip(3)
                    guard let id = entry.uint(version == 2 ? 2 : 4), entry.skip(2), let itemType = entry.uint(4) else { return }
                    items[UInt32(truncatingIfNeeded: id), default: Item()].type = UInt32(truncatingIfNeeded: itemType)
                }
            case Self.iprp:
                var read: Set<UInt32> = []
                ISOBoxes.forEachBox(bytes, in: body) { type, body in
                    guard read.insert(type).inserted else { return }
                    if type == Self.ipco {
                        ISOBoxes.forEachBox(bytes, in: body) { properties.append(($0, $1)) }
                    } else if type == Self.ipma {
                        readAssociations(ISOReader(bytes, body))
                    }
                }
            case Self.iref:
                let wide = (reader.u8() ?? 0) >= 1
                reader.skip(3)
                ISOBoxes.forEachBox(bytes, in: reader.rest) { type, body in
                    var entry = ISOReader(bytes, body)
                    guard let from = entry.uint(wide ? 4 : 2), let count = entry.uint(2), count > 0 else { return }
                    let to = (0..<count).compactMap { _ in entry.uint(wide ? 4 : 2).map(UInt32.init(truncatingIfNeeded:)) }
                    references.append((type, UInt32(truncatingIfNeeded: from), to))
                    if type == Self.dimg { derived.insert(UInt32(truncatingIfNeeded: from)) }
                }
            case Self.iloc:
                locations += Self.locations(reader)
            case Self.idat where idat == nil:
                idat = body
            default:
                break
            }
        }
        for location in locations {
            items[location.id, default: Item()].extents = Self.ranges(location.extents, method: location.method, idat: idat, fileSize: bytes.count)
        }
    }

    private mutating func readAssociations(_ start: ISOReader) {
        var reader = start
        guard let version = reader.u8(), reader.skip(2), let flags = reader.u8(), let count = reader.uint(4) else { return }
        for _ in 0..<min(count, ISOItemLimit.maxItems) {
            guard let id = reader.uint(version < 1 ? 2 : 4), let associations = reader.u8() else { return }
            var indices: [Int] = []
            for _ in 0..<associations {
                guard let value = reader.uint(flags & 1 != 0 ? 2 : 1) else { return }
                let index = value & (flags & 1 != 0 ? 0x7FFF : 0x7F)
                if index > 0 { indices.append(index - 1) }
            }
            items[UInt32(truncatingIfNeeded: id), default: Item()].properties += indices
        }
    }

    /// The property of `type` that item `id` lists first, as libheif and libavif take it.
    func property(_ type: UInt32, of id: UInt32) -> Range<Int>? {
        items[id]?.properties.lazy.filter { $0 < properties.count }.map { properties[$0] }.first { $0.type == type }?.body
    }

    /// The size item `id` declares (`ispe`), when it declares one.
    func declaredSize(of id: UInt32, in bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard let body = property(Self.ispe, of: id) else { return nil }
        var reader = ISOReader(bytes, body)
        guard reader.skip(4), let width = reader.uint(4), let height = reader.uint(4) else { return nil }
        return (width, height)
    }

    /// The items a decode of the primary image reads: the primary, the auxiliary images that
    /// belong to it (alpha, depth, gain maps), and the images each of those derives from (grid
    /// tiles, overlay layers), to a depth of four.
    var decodedItems: [UInt32] {
        guard let primary else { return [] }
        var found: [UInt32] = [], known: Set<UInt32> = []
        var queue = [primary] + references.filter { $0.type == Self.auxl && $0.to.contains(primary) }.map(\.from)
        for _ in 0..<4 where !queue.isEmpty {
            var fresh: Set<UInt32> = []
            for id in queue where known.insert(id).inserted {
                found.append(id)
                fresh.insert(id)
            }
            queue = references.filter { $0.type == Self.dimg && fresh.contains($0.from) }.flatMap(\.to)
        }
        return found
    }

    /// Whether item `id` holds coded data (an image no other derives from: not a grid, an
    /// overlay or an identity transform).
    func isCoded(_ id: UInt32) -> Bool { !derived.contains(id) }

    static let pitm = ISOBoxes.fourCC("pitm"), iinf = ISOBoxes.fourCC("iinf"), infe = ISOBoxes.fourCC("infe")
    static let iprp = ISOBoxes.fourCC("iprp"), ipco = ISOBoxes.fourCC("ipco"), ipma = ISOBoxes.fourCC("ipma")
    static let iref = ISOBoxes.fourCC("iref"), iloc = ISOBoxes.fourCC("iloc"), idat = ISOBoxes.fourCC("idat")
    static let ispe = ISOBoxes.fourCC("ispe"), dimg = ISOBoxes.fourCC("dimg"), auxl = ISOBoxes.fourCC("auxl")
}
