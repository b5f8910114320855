import Foundation
import WebImage
import WebImageTerminal

/// The pages and cells of `webimage show`, and drawing them: a change marks its cell, and
/// marked cells are drawn together a moment later (one write per burst of events).
@MainActor
final class ShowScreen {
    struct Options {
        var grid: Bool
        var width: Int?
        var cellWidth: Int
        var graphics: TerminalGraphics
    }

    let requests: [ImageRequest]
    let options: Options
    let pipeline: ImagePipeline
    let registry = ImageOperationRegistry()
    private let terminal: TerminalDevice?
    private(set) var size: TerminalDevice.Size
    private(set) var layout: ShowLayout
    private(set) var cells: [ShowCell] = []
    private(set) var page = 0
    private(set) var paused = false
    private(set) var placeholder: Image
    private(set) var failureImage: Image
    private var dirty = Set<Int>()
    private var redrawAll = true
    private var flushScheduled = false

    /// Animations play only on a terminal; a pipe gets the first frame.
    var animates: Bool { terminal != nil }

    init(requests: [ImageRequest], options: Options, pipeline: ImagePipeline, terminal: TerminalDevice?) {
        self.requests = requests
        self.options = options
        self.pipeline = pipeline
        self.terminal = terminal
        size = terminal?.size ?? TerminalDevice.Size(columns: options.width ?? 80, rows: 0, cell: .typical)
        layout = ShowLayout.make(width: 1, height: 1, grid: false, cellWidth: 1, count: 1)
        placeholder = Self.solid(width: 1, height: 1, gray: 0x40)
        failureImage = placeholder
        applySize()
    }

    var pageCount: Int { max(1, (requests.count + layout.perPage - 1) / layout.perPage) }
    var encoder: any TerminalImageEncoding { options.graphics.encoder() }
    var pixelSize: (width: Int, height: Int) {
        encoder.pixelSize(columns: layout.cellColumns, rows: layout.imageRows, cell: size.cell)
    }

    /// Binds the cells to page `number`'s requests; cells that leave the screen lose their load
    /// (the binding layer cancels it).
    func showPage(_ number: Int) {
        page = min(max(0, number), pageCount - 1)
        for (slot, cell) in cells.enumerated() {
            let index = page * layout.perPage + slot
            if index < requests.count { cell.bind(requests[index]) } else { cell.unbind() }
        }
        redrawAll = true
        scheduleFlush()
    }

    func togglePause() {
        paused.toggle()
        scheduleFlush()
    }

    /// The terminal changed size: lay out again, keep the first image of the page on screen.
    func resize() {
        let first = page * layout.perPage
        applySize()
        showPage(first / layout.perPage)
    }

    func stop() { cells.forEach { $0.unbind(redraw: false) } }

    func setNeedsDisplay(_ cell: ShowCell) {
        dirty.insert(cell.index)
        scheduleFlush()
    }

    /// Pipe mode: waits for every load of the page, then returns the picture as text lines.
    func renderWhenLoaded() async -> String {
        showPage(0)
        while cells.contains(where: \.isLoading) { try? await Task.sleep(for: .milliseconds(20)) }
        var lines: [String] = []
        for row in 0..<layout.rows {
            let rowCells = cells[(row * layout.columns)..<min(cells.count, (row + 1) * layout.columns)].filter(\.isBound)
            guard !rowCells.isEmpty else { break }
            let cellLines = rowCells.map { $0.lines() }
            for line in 0...layout.imageRows { lines.append(cellLines.map { $0[line] }.joined(separator: " ")) }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    private func applySize() {
        if let terminal { size = terminal.size }
        let width = min(options.width ?? size.columns, size.columns > 0 ? size.columns : Int.max)
        let newLayout = ShowLayout.make(
            width: width, height: terminal == nil ? nil : size.rows, grid: options.grid, cellWidth: options.cellWidth,
            count: requests.count)
        let pixels = options.graphics.encoder().pixelSize(columns: newLayout.cellColumns, rows: newLayout.imageRows, cell: size.cell)
        placeholder = Self.solid(width: pixels.width, height: pixels.height, gray: 0x40)
        failureImage = Self.solid(width: pixels.width, height: pixels.height, red: 0x80)
        if newLayout.perPage != cells.count { cells.forEach { $0.unbind(redraw: false) } }
        layout = newLayout
        if cells.count != layout.perPage { cells = (0..<layout.perPage).map { ShowCell(index: $0, screen: self) } }
        cells.forEach { $0.layoutChanged() }
        redrawAll = true
    }

    private func scheduleFlush() {
        guard terminal != nil, !flushScheduled else { return }
        flushScheduled = true
        Task { @MainActor in
            try? await Task.sleep(for: .milliseconds(15))
            self.flush()
        }
    }

    private func flush() {
        flushScheduled = false
        guard let terminal else { return }
        var out = "\u{1B}[?2026h"  // synchronized update, where supported
        if redrawAll { out += "\u{1B}[0m\u{1B}[2J" }
        for cell in cells where redrawAll || dirty.contains(cell.index) { out += cell.draw() }
        out += "\u{1B}[\(size.rows);1H\u{1B}[0m\u{1B}[2K" + statusLine()
        out += "\u{1B}[?2026l"
        redrawAll = false
        dirty.removeAll()
        terminal.write(out)
    }

    private func statusLine() -> String {
        let first = page * layout.perPage + 1, last = min(requests.count, (page + 1) * layout.perPage)
        var text = "page \(page + 1)/\(pageCount) · " + (paused ? "paused · " : "")
        text += "\(first)–\(last) of \(requests.count) · \(options.graphics.rawValue) · n/p page · space pause · q quit"
        return String(text.prefix(max(1, size.columns - 1)))
    }

    static func solid(width: Int, height: Int, gray: UInt8 = 0, red: UInt8? = nil) -> Image {
        let count = max(1, width) * max(1, height)
        var pixels = [UInt8](repeating: 255, count: count * 4)
        for i in 0..<count {
            pixels[i * 4] = red ?? gray
            pixels[i * 4 + 1] = red == nil ? gray : 0
            pixels[i * 4 + 2] = red == nil ? gray : 0
        }
        return Image(format: .png, pixelWidth: max(1, width), pixelHeight: max(1, height), pixels: pixels, isOpaque: true)
    }
}
