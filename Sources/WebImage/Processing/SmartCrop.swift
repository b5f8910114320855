extension ImageProcessors {
    /// Where the most interesting `keep`-sized window of an image lies: the choice behind
    /// ``Gravity/smart`` (imgproxy's `gravity=sm`).
    ///
    /// The picture is reduced to an attention map of at most ``mapSide`` cells on its long side
    /// (each cell the average of at most 3 × 3 evenly spread samples, so the map costs the same
    /// for a 100 MP picture as for a 1 MP one). Each cell scores the sum of
    /// - detail: the luminance gradient's magnitude (central differences across the cell's neighbours);
    /// - colourfulness: the chroma (largest minus smallest channel), which a vivid object has
    ///   and paper, sky and grey texture have little of;
    /// - skin: closeness of the cell's chromaticity (r and g over r + g + b) to skin tones, at a
    ///   lightness skin can have;
    /// colourfulness weighted twice, the colour terms by the cell's alpha. The map's median is
    /// subtracted (clamped at 0), so an even texture that covers the picture stops counting and
    /// only what stands out from it does, and what is left is squared, so a strong difference
    /// on a small object outweighs a faint one over a large area (the brighter half of a
    /// gradient). Every window position is then scored by its sum through a summed-area table;
    /// among the positions within 3 % of the best, the one whose central half and central
    /// quarter hold the most is kept (the object is centred rather than touching an edge), on a
    /// tie the one centred nearest the attention's centre of mass. A picture where nothing stands
    /// out is cropped in the centre.
    ///
    /// Cost: at most `mapSide² × 9` pixel reads, then a few passes over `mapSide²` cells and the
    /// window positions (fewer than `mapSide²`); memory a few maps of `mapSide²` numbers. Nothing
    /// depends on the target size.
    ///
    /// ```swift
    /// let origin = ImageProcessors.SmartCrop.origin(of: image, keep: (width: 300, height: 300))
    /// let cut = try image.processed(by: [.crop(x: origin.x, y: origin.y, width: 300, height: 300)])
    /// ```
    public enum SmartCrop {
        /// The attention map's longest side, in cells.
        public static let mapSide = 256

        /// The most memory a choice takes, whatever the picture: the cells' four channels, their
        /// luminance, their scores and the summed-area table, in `Double`s (about 3.7 MB).
        public static let workingBytes = (mapSide + 1) * (mapSide + 1) * 7 * MemoryLayout<Double>.size

        /// The top left corner of the `keep` window (cut to the image) that holds the most
        /// attention within `image`; the centre's when nothing stands out.
        public static func origin(of image: Image, keep: (width: Int, height: Int)) -> (x: Int, y: Int) {
            let total = (width: image.pixelWidth, height: image.pixelHeight)
            let window = (width: min(max(keep.width, 1), total.width), height: min(max(keep.height, 1), total.height))
            let centre = Gravity.center.origin(keep: window, total: total)
            guard total.width > 0, total.height > 0, window.width < total.width || window.height < total.height else { return centre }
            let map = AttentionMap(image)
            // The window in cells, and how far each cell is in pixels.
            let cw = Double(total.width) / Double(map.width), ch = Double(total.height) / Double(map.height)
            let kw = min(map.width, max(1, Int((Double(window.width) / cw).rounded())))
            let kh = min(map.height, max(1, Int((Double(window.height) / ch).rounded())))
            guard let cell = map.bestWindow(width: kw, height: kh) else { return centre }
            // A cell's first pixel, as the map sampled it (its bounds are rounded down).
            return (min(cell.x * total.width / map.width, total.width - window.width),
                    min(cell.y * total.height / map.height, total.height - window.height))
        }
    }
}

/// The per-cell attention scores of ``ImageProcessors/SmartCrop`` and the window search over them.
struct AttentionMap {
    let width: Int, height: Int
    /// Row-major scores, `width × height`, each ≥ 0.
    private(set) var scores: [Double]

    init(_ image: Image) {
        let side = ImageProcessors.SmartCrop.mapSide
        let long = max(image.pixelWidth, image.pixelHeight)
        width = long <= side ? image.pixelWidth : max(1, image.pixelWidth * side / long)
        height = long <= side ? image.pixelHeight : max(1, image.pixelHeight * side / long)
        let cells = Self.cells(image, width: width, height: height)
        scores = Self.scores(cells, width: width, height: height)
    }

    /// Each cell's average premultiplied R, G, B, A in 0–1 (four numbers a cell), from at most
    /// 3 × 3 samples spread evenly over the pixels it covers.
    private static func cells(_ image: Image, width: Int, height: Int) -> [Double] {
        var out = [Double](repeating: 0, count: width * height * 4)
        let w = image.pixelWidth, h = image.pixelHeight, stride = image.bytesPerRow
        func spots(_ cell: Int, _ cells: Int, _ pixels: Int) -> [Int] {
            let start = cell * pixels / cells, end = max((cell + 1) * pixels / cells, start + 1)
            let count = min(end - start, 3)
            return (0..<count).map { start + (2 * $0 + 1) * (end - start) / (2 * count) }
        }
        let columns = (0..<width).map { spots($0, width, w) }
        image.pixels.withUnsafeBufferPointer { pixels in
            for cy in 0..<height {
                let rows = spots(cy, height, h)
                for cx in 0..<width {
                    var sum = (0, 0, 0, 0)
                    for y in rows {
                        for x in columns[cx] {
                            let i = y * stride + x * 4
                            sum.0 += Int(pixels[i]); sum.1 += Int(pixels[i + 1]); sum.2 += Int(pixels[i + 2]); sum.3 += Int(pixels[i + 3])
                        }
                    }
                    let n = Double(rows.count * columns[cx].count) * 255, o = (cy * width + cx) * 4
                    out[o] = Double(sum.0) / n; out[o + 1] = Double(sum.1) / n; out[o + 2] = Double(sum.2) / n; out[o + 3] = Double(sum.3) / n
                }
            }
        }
        return out
    }

    /// Detail + 2 × colourfulness + skin per cell (the colour terms times alpha), less the map's
    /// median (at least 0), squared: a faint difference over a large area (a gradient's far half
    /// is above the median) weighs little against a strong one over a small object.
    private static func scores(_ cells: [Double], width: Int, height: Int) -> [Double] {
        let count = width * height
        var luma = [Double](repeating: 0, count: count)
        for i in 0..<count { luma[i] = 0.299 * cells[i * 4] + 0.587 * cells[i * 4 + 1] + 0.114 * cells[i * 4 + 2] }
        var scores = [Double](repeating: 0, count: count)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x, alpha = cells[i * 4 + 3]
                let dx = luma[y * width + min(x + 1, width - 1)] - luma[y * width + max(x - 1, 0)]
                let dy = luma[min(y + 1, height - 1) * width + x] - luma[max(y - 1, 0) * width + x]
                let detail = (dx * dx + dy * dy).squareRoot()
                guard alpha > 0 else { scores[i] = detail; continue }
                // Straight colour, for chroma and skin.
                let r = cells[i * 4] / alpha, g = cells[i * 4 + 1] / alpha, b = cells[i * 4 + 2] / alpha
                let chroma = max(r, g, b) - min(r, g, b)
                scores[i] = detail + (chroma * 2 + skin(r, g, b, lightness: luma[i] / alpha)) * alpha
            }
        }
        let level = Self.median(scores)
        for i in 0..<count {
            let above = max(scores[i] - level, 0)
            scores[i] = above * above
        }
        return scores
    }

    /// The median of `values` (each ≥ 0) to within 1/4096 of the largest, rounded down: a
    /// histogram in one pass rather than a sort of up to 65,536 cells.
    static func median(_ values: [Double]) -> Double {
        let top = values.max() ?? 0
        guard top > 0, top.isFinite else { return 0 }
        var bins = [Int](repeating: 0, count: 4096)
        for value in values { bins[min(max(Int(value / top * 4095), 0), 4095)] += 1 }
        var seen = 0
        for (bin, count) in bins.enumerated() {
            seen += count
            if seen > values.count / 2 { return Double(bin) / 4095 * top }
        }
        return top
    }

    /// 1 for a typical skin tone, falling to 0 at a chromaticity distance of 0.08 from it or
    /// outside the lightness skin has in a photograph.
    private static func skin(_ r: Double, _ g: Double, _ b: Double, lightness: Double) -> Double {
        let sum = r + g + b
        guard sum > 0.15, (0.15...0.95).contains(lightness) else { return 0 }
        let dr = r / sum - 0.45, dg = g / sum - 0.31
        return max(0, 1 - (dr * dr + dg * dg).squareRoot() / 0.08)
    }

    /// The top left cell of the best `width × height` window (see ``ImageProcessors/SmartCrop``),
    /// or `nil` when nothing stands out anywhere.
    func bestWindow(width kw: Int, height kh: Int) -> (x: Int, y: Int)? {
        // Summed-area table with a zero row and column in front.
        let stride = width + 1
        var table = [Double](repeating: 0, count: stride * (height + 1))
        for y in 0..<height {
            var row = 0.0
            for x in 0..<width {
                row += scores[y * width + x]
                table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + row
            }
        }
        func sum(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Double {
            table[(y + h) * stride + x + w] - table[y * stride + x + w] - table[(y + h) * stride + x] + table[y * stride + x]
        }
        guard sum(0, 0, width, height) > 0 else { return nil }
        let positions = (x: width - kw + 1, y: height - kh + 1)
        var best = 0.0
        for y in 0..<positions.y { for x in 0..<positions.x { best = max(best, sum(x, y, kw, kh)) } }
        // Nested boxes inside the window — its central half and its central quarter — weigh
        // what sits in its middle more: the object is centred rather than touching an edge.
        func core(_ x: Int, _ y: Int) -> Double {
            let half = sum(x + kw / 4, y + kh / 4, max(kw - 2 * (kw / 4), 1), max(kh - 2 * (kh / 4), 1))
            let quarter = sum(x + kw * 3 / 8, y + kh * 3 / 8, max(kw - 2 * (kw * 3 / 8), 1), max(kh - 2 * (kh * 3 / 8), 1))
            return half + quarter
        }
        // Ties (an object outside every window's middle) go to the window centred nearest the
        // map's centre of attention.
        var mass = (x: 0.0, y: 0.0)
        for y in 0..<height {
            for x in 0..<width {
                mass.x += scores[y * width + x] * (Double(x) + 0.5)
                mass.y += scores[y * width + x] * (Double(y) + 0.5)
            }
        }
        let all = sum(0, 0, width, height), tie = best * 1e-9
        let middle = (x: mass.x / all - Double(kw) / 2, y: mass.y / all - Double(kh) / 2)
        var chosen = (x: 0, y: 0), chosenCore = -1.0, chosenDistance = Double.infinity
        for y in 0..<positions.y {
            for x in 0..<positions.x where sum(x, y, kw, kh) >= best * 0.97 {
                let held = core(x, y)
                let distance = (Double(x) - middle.x) * (Double(x) - middle.x) + (Double(y) - middle.y) * (Double(y) - middle.y)
                if held > chosenCore + tie || (abs(held - chosenCore) <= tie && distance < chosenDistance) {
                    chosen = (x, y); chosenCore = held; chosenDistance = distance
                }
            }
        }
        return chosen
    }
}
