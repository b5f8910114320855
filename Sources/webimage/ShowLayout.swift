/// Where `webimage show` puts its cells: a cell is an image box of `cellColumns × imageRows`,
/// a caption row under it and a blank row; the last terminal row is the status line.
struct ShowLayout: Equatable {
    var cellColumns: Int
    var imageRows: Int
    var columns: Int
    var rows: Int

    var perPage: Int { columns * rows }

    /// The 1-based terminal row and column of cell `index`'s top-left corner.
    func origin(of index: Int) -> (row: Int, column: Int) {
        (index / columns * (imageRows + 2) + 1, index % columns * (cellColumns + 1) + 1)
    }

    /// - Parameters:
    ///   - height: the terminal's rows, or nil when writing to a pipe (then every image is on
    ///     the one page, and a single image is drawn half as many rows high as it is wide).
    static func make(width: Int, height: Int?, grid: Bool, cellWidth: Int, count: Int) -> ShowLayout {
        if grid {
            let cell = max(2, min(cellWidth, width))
            let imageRows = max(1, cell / 2)
            let columns = max(1, (width + 1) / (cell + 1))
            let rows = height.map { max(1, ($0 - 1) / (imageRows + 2)) } ?? max(1, (count + columns - 1) / columns)
            return ShowLayout(cellColumns: cell, imageRows: imageRows, columns: columns, rows: rows)
        }
        let imageRows = height.map { max(1, $0 - 3) } ?? max(1, width / 2)
        return ShowLayout(cellColumns: width, imageRows: imageRows, columns: 1, rows: height == nil ? max(1, count) : 1)
    }
}
