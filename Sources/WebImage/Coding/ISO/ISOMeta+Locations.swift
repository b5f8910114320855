extension ISOMeta {
    /// The entries of an `iloc` box: item, construction method, extents (offset, length).
    static func locations(_ start: ISOReader) -> [(id: UInt32, method: Int, extents: [(offset: Int, length: Int)])] {
        var reader = start, found: [(id: UInt32, method: Int, extents: [(offset: Int, length: Int)])] = []
        guard let version = reader.u8(), reader.skip(3), let sizes = reader.u8(), let moreSizes = reader.u8(),
              let count = reader.uint(version < 2 ? 2 : 4) else { return [] }
        let offsetSize = sizes >> 4, lengthSize = sizes & 15, baseSize = moreSizes >> 4
        let indexSize = version == 0 ? 0 : moreSizes & 15
        for _ in 0..<min(count, ISOItemLimit.maxItems) {
            guard let id = reader.uint(version < 2 ? 2 : 4) else { break }
            var method = 0
            if version >= 1 { guard let value = reader.uint(2) else { break }; method = value & 15 }
            guard let reference = reader.uint(2), let base = reader.uint(baseSize), let extentCount = reader.uint(2) else { break }
            var extents: [(offset: Int, length: Int)] = []
            // One past the extents kept is read, to tell an item of too many; the rest are skipped.
            let kept = min(extentCount, maxExtents + 1)
            for _ in 0..<kept {
                guard reader.skip(indexSize), let offset = reader.uint(offsetSize), let length = reader.uint(lengthSize) else { return found }
                extents.append((offset.addingReportingOverflow(base).partialValue, length))
            }
            guard reader.skip((extentCount - kept) * (indexSize + offsetSize + lengthSize)) else { return found }
            // Data in another file (a data reference) is not read here.
            found.append((UInt32(truncatingIfNeeded: id), reference == 0 ? method : -1, extents))
        }
        return found
    }

    /// The file ranges of `extents` (method 0: offsets in the file; 1: in `idat`); `nil` when
    /// they cannot be told or do not fit. A length of 0 runs to the end.
    static func ranges(_ extents: [(offset: Int, length: Int)], method: Int, idat: Range<Int>?, fileSize: Int) -> [Range<Int>]? {
        guard extents.count <= maxExtents else { return nil }
        let space: Range<Int>
        switch method {
        case 0: space = 0..<fileSize
        case 1: guard let idat else { return nil }; space = idat
        default: return nil
        }
        var ranges: [Range<Int>] = []
        for extent in extents {
            guard extent.offset >= 0, extent.length >= 0, extent.offset <= space.count else { return nil }
            let start = space.lowerBound + extent.offset
            let length = extent.length == 0 ? space.upperBound - start : extent.length
            guard length <= space.upperBound - start else { return nil }
            ranges.append(start..<(start + length))
        }
        return ranges
    }
}
