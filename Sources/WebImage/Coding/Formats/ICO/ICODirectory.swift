/// The entries of an ICO or CUR file: where each image lies and its real size, read from the
/// entry itself (a PNG's IHDR or a bitmap header), since directory sizes are often wrong.
struct ICODirectory {
    struct Entry {
        var range: Range<Int>
        var width: Int, height: Int
        var bitCount: Int
        var isPNG: Bool
        /// A bitmap entry's bytes before its colour rows (header, masks, palette), and its row
        /// length: enough to tell whether the rows fit without reading the header again.
        var bitmapStart = 0, rowBytes = 0
        /// The directory's size was too small for the entry, which was read to the end of the
        /// data instead (as Chromium and Pillow read entries: from their offset on).
        var sizeIgnored = false
    }

    struct ParseError: Error { var reason: String }

    private(set) var entries: [Entry] = []

    init(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        guard bytes.count >= 6, u16(0) == 0, u16(2) == 1 || u16(2) == 2 else { throw ParseError(reason: "no ICO/CUR header") }
        let count = u16(4)
        guard count > 0 else { throw ParseError(reason: "no entries") }
        guard bytes.count >= 6 + count * 16 else { throw ParseError(reason: "directory truncated") }
        for index in 0..<count {
            let d = 6 + index * 16
            let offset = u32(d + 12), size = u32(d + 8)
            guard offset >= 6 + count * 16, size > 0 else { continue }
            // An entry that starts past the end: the file was cut short.
            guard offset < bytes.count else { throw ParseError(reason: "entry \(index) lies past the end of the data") }
            let range = offset..<(offset + min(size, bytes.count - offset))
            let declared = Self.entry(bytes, range)
            if range.upperBound < bytes.count, declared.map({ !Self.fits($0, bytes, range) }) ?? true,
               var whole = Self.entry(bytes, offset..<bytes.count) {
                whole.sizeIgnored = true
                entries.append(whole)
            } else if let declared {
                entries.append(declared)
            }
        }
        guard !entries.isEmpty else { throw ParseError(reason: "no readable entry") }
    }

    /// Reads an entry's own header; `nil` for an unreadable one (it is skipped).
    private static func entry(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Entry? {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        if slice.count >= 24, slice.prefix(8).elementsEqual(PNGChunks.signature) {
            let width = Int(PNGChunks.readUInt32(slice, 16)), height = Int(PNGChunks.readUInt32(slice, 20))
            return Entry(range: range, width: width, height: height, bitCount: 32, isPNG: true)
        }
        guard let header = try? BMPHeader(slice, at: 0, readingPalette: false) else { return nil }
        return Entry(
            range: range, width: header.width, height: header.height / 2, bitCount: header.bitCount, isPNG: false,
            bitmapStart: header.end, rowBytes: header.stride)
    }

    /// Whether a bitmap entry's header and colour rows lie inside `range` (the AND mask may
    /// be missing; a PNG entry's end is its decoder's to judge).
    private static func fits(_ entry: Entry, _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        guard !entry.isPNG else { return true }
        let (rows, overflow) = entry.rowBytes.multipliedReportingOverflow(by: entry.height)
        return !overflow && entry.bitmapStart <= range.count && rows <= range.count - entry.bitmapStart
    }

    /// The largest entry (then the deepest), or with `size` the smallest whose longer side is
    /// at least `size` (the largest when none is that big).
    func preferred(size: Int?) -> Entry {
        // Sides come from the file (up to 2³² − 1 each): their product fits UInt64, not Int.
        func area(_ entry: Entry) -> UInt64 { UInt64(entry.width) * UInt64(entry.height) }
        let ordered = entries.sorted { (area($0), $0.bitCount) < (area($1), $1.bitCount) }
        if let size, let fitting = ordered.first(where: { max($0.width, $0.height) >= size }) {
            // Among entries of that size, the deepest.
            return ordered.last { $0.width == fitting.width && $0.height == fitting.height } ?? fitting
        }
        return ordered[ordered.count - 1]
    }
}
