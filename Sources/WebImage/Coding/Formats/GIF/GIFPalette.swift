/// Reduces an RGBA image to at most 256 palette entries for GIF.
///
/// An image with at most 255 distinct opaque colours keeps them exactly (so a GIF round trip is
/// lossless). Otherwise colours are binned at 5 bits per channel and split by median cut: the
/// box with the widest channel range (weighted by its pixel count) is cut at its median until
/// there are enough boxes; each box's average colour becomes one entry. Alpha below 128 maps to
/// a transparent entry, since GIF transparency is on or off.
///
/// Every pass over the pixels looks at `Task.isCancelled` each ``stride`` pixels: a render whose
/// deadline passed stops here within milliseconds (a 16 MP picture takes seconds to quantize).
enum GIFPalette {
    /// Pixels between two looks at `Task.isCancelled`.
    static let stride = 1 << 16

    /// RGB triples, one index per pixel, and the transparent index if any pixel needs it.
    static func quantize(_ image: Image) throws(ImageEncodingError) -> (palette: [UInt8], indices: [UInt8], transparent: Int?) {
        let colors = try straightColors(image)
        let hasTransparency = colors.contains { $0 == nil }
        let capacity = hasTransparency ? 255 : 256
        var palette: [UInt8] = []
        var indices = [UInt8](repeating: 0, count: colors.count)
        if let exact = try exactPalette(colors, capacity: capacity) {
            for (color, _) in exact.sorted(by: { $0.value < $1.value }) {
                palette += [UInt8(color >> 16), UInt8(color >> 8 & 0xFF), UInt8(color & 0xFF)]
            }
            try stoppable(colors.count) { for i in $0 { indices[i] = colors[i].map { UInt8(exact[$0] ?? 0) } ?? 0 } }
        } else {
            let (entries, lookup) = try medianCut(colors, capacity: capacity)
            palette = entries
            try stoppable(colors.count) { for i in $0 { indices[i] = colors[i].map { lookup[bin($0)] } ?? 0 } }
        }
        if palette.isEmpty { palette = [0, 0, 0] }
        guard hasTransparency else { return (palette, indices, nil) }
        let transparent = palette.count / 3
        palette += [0, 0, 0]
        for (i, color) in colors.enumerated() where color == nil { indices[i] = UInt8(transparent) }
        return (palette, indices, transparent)
    }

    // MARK: - Internals

    /// `body` over `0..<count` in ranges of ``stride``, with a look at `Task.isCancelled` before each.
    private static func stoppable(_ count: Int, _ body: (Range<Int>) -> Void) throws(ImageEncodingError) {
        var start = 0
        while start < count {
            guard !Task.isCancelled else { throw .cancelled }
            let end = min(count, start + stride)
            body(start..<end)
            start = end
        }
    }

    /// 0xRRGGBB per pixel with alpha undone, `nil` for transparent pixels.
    private static func straightColors(_ image: Image) throws(ImageEncodingError) -> [UInt32?] {
        var colors: [UInt32?] = []
        colors.reserveCapacity(image.pixelWidth * image.pixelHeight)
        let pixels = image.pixels, bytesPerRow = image.bytesPerRow
        let rowsPerLook = max(1, stride / max(image.pixelWidth, 1))
        for y in 0..<image.pixelHeight {
            if y % rowsPerLook == 0, Task.isCancelled { throw .cancelled }
            for x in 0..<image.pixelWidth {
                let i = y * bytesPerRow + x * 4
                let a = UInt32(pixels[i + 3])
                guard a >= 128 else { colors.append(nil); continue }
                func straight(_ c: UInt8) -> UInt32 { min(255, (UInt32(c) * 255 + a / 2) / a) }
                colors.append(straight(pixels[i]) << 16 | straight(pixels[i + 1]) << 8 | straight(pixels[i + 2]))
            }
        }
        return colors
    }

    private static func exactPalette(_ colors: [UInt32?], capacity: Int) throws(ImageEncodingError) -> [UInt32: Int]? {
        var map: [UInt32: Int] = [:]
        for (i, color) in colors.enumerated() {
            if i % stride == 0, Task.isCancelled { throw .cancelled }
            guard let color, map[color] == nil else { continue }
            guard map.count < capacity else { return nil }
            map[color] = map.count
        }
        return map
    }

    private static func bin(_ color: UInt32) -> Int {
        let r = Int(color >> 19) & 0x1F, g = Int(color >> 11) & 0x1F, b = Int(color >> 3) & 0x1F
        return r << 10 | g << 5 | b
    }

    /// Bins of similar colours; `score` (widest channel range × pixels) picks the box to cut next.
    private struct Box {
        var bins: [Int]
        var count: Int
        var score: Int
        var widest: Int

        init(_ bins: [Int], counts: [Int]) {
            self.bins = bins
            count = bins.reduce(0) { $0 + counts[$1] }
            let ranges = (0..<3).map { c in
                (bins.map { Box.channel($0, c) }.max() ?? 0) - (bins.map { Box.channel($0, c) }.min() ?? 0)
            }
            widest = ranges.indices.max { ranges[$0] < ranges[$1] } ?? 0
            score = bins.count > 1 ? ranges[widest] * count : -1
        }

        static func channel(_ bin: Int, _ c: Int) -> Int { bin >> (10 - c * 5) & 0x1F }
    }

    /// Palette entries and a 15-bit bin → index table.
    private static func medianCut(_ colors: [UInt32?], capacity: Int) throws(ImageEncodingError) -> ([UInt8], [UInt8]) {
        var counts = [Int](repeating: 0, count: 1 << 15)
        var sums = [(Int, Int, Int)](repeating: (0, 0, 0), count: 1 << 15)
        try stoppable(colors.count) { range in
            for case let color? in colors[range] {
                let b = bin(color)
                counts[b] += 1
                sums[b].0 += Int(color >> 16); sums[b].1 += Int(color >> 8 & 0xFF); sums[b].2 += Int(color & 0xFF)
            }
        }
        var boxes = [Box(counts.indices.filter { counts[$0] > 0 }, counts: counts)]
        while boxes.count < capacity {
            guard let index = boxes.indices.max(by: { boxes[$0].score < boxes[$1].score }), boxes[index].score >= 0 else { break }
            let c = boxes[index].widest
            let sorted = boxes[index].bins.sorted { Box.channel($0, c) < Box.channel($1, c) }
            var running = 0, cut = 1
            for (i, b) in sorted.enumerated() {
                running += counts[b]
                if running * 2 >= boxes[index].count { cut = min(max(i + 1, 1), sorted.count - 1); break }
            }
            boxes[index] = Box(Array(sorted[..<cut]), counts: counts)
            boxes.append(Box(Array(sorted[cut...]), counts: counts))
        }
        var palette: [UInt8] = []
        var lookup = [UInt8](repeating: 0, count: 1 << 15)
        for (index, box) in boxes.enumerated() {
            let total = max(box.count, 1)
            let sum = box.bins.reduce((0, 0, 0)) { ($0.0 + sums[$1].0, $0.1 + sums[$1].1, $0.2 + sums[$1].2) }
            palette += [UInt8(sum.0 / total), UInt8(sum.1 / total), UInt8(sum.2 / total)]
            for b in box.bins { lookup[b] = UInt8(index) }
        }
        return (palette, lookup)
    }
}
