import ArgumentParser
import Foundation
import WebImage
import WebImageTerminal

/// `webimage show`: images in the terminal, each grid cell an `ImageTarget` bound through the
/// binding layer — placeholder, progress, previews, final image or failure mark; paging
/// rebinds the cells, which cancels the loads of the cells that left the screen.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show images in the terminal (kitty graphics, sixel, iTerm2 inline images or truecolor half-blocks).",
        discussion: """
            Keys: n, →, ↓ or Page Down: next page; p, ←, ↑ or Page Up: previous page; space: pause or \
            resume animations; q: quit. Resizing the terminal redraws. When standard output is not a \
            terminal, --protocol blocks --width N writes the pictures once every load has finished \
            (for pipes and tests); otherwise it is an error (exit 64).
            """)

    @Argument(help: "Image URLs.")
    var urls: [String] = []

    @Option(name: .long, help: "Read more URLs from this file, one per line ('-' for standard input).")
    var input: String?

    @Flag(name: .long, help: "Show a page of thumbnails at once instead of one image per page.")
    var grid = false

    @Option(name: .long, help: "Columns to draw in (default: the terminal's width).")
    var width: Int?

    @Option(name: .customLong("cell-width"), help: "Columns per grid cell (default 16).")
    var cellWidth = 16

    @Option(name: .customLong("protocol"), help: "auto, kitty, sixel, iterm or blocks (default auto).")
    var graphics: GraphicsChoice = .auto

    @Option(name: .customLong("cache-dir"), help: "Disk cache directory (default: the standard one).")
    var cacheDir: String?

    @Option(name: .long, help: "Seconds allowed for each download attempt, body included (default 15), as in fetch.")
    var timeout: Double?
    @Option(name: .customLong("memory-budget-mb"), help: "Memory decoded images may take at once, in MB (default: half the cgroup limit or of physical memory).")
    var memoryBudgetMb: Int?

    func validate() throws {
        guard timeout.map({ $0 > 0 && $0.isFinite }) ?? true else { throw ValidationError("--timeout must be a positive number of seconds") }
        if let width, width < 4 { throw ValidationError("--width must be at least 4") }
        if cellWidth < 4 { throw ValidationError("--cell-width must be at least 4") }
    }

    func run() async throws {
        let all = urls + (try URLList.read(input))
        guard !all.isEmpty else { throw ValidationError("give at least one URL (or --input FILE)") }
        let requests = try all.map { text -> ImageRequest in
            guard let url = URL(string: text), url.scheme != nil else { throw CLIError("not a URL: \(text)") }
            // The pipeline decodes an animation's first frame; the cell plays the rest from the
            // original's bytes one frame at a time (ShowAnimation).
            return ImageRequest(url: url, options: [.progressiveLoad, .decodeFirstFrameOnly])
        }
        let interactive = isatty(STDOUT_FILENO) == 1
        guard interactive || (graphics == .blocks && width != nil) else {
            FileHandle.standardError.write(Data(
                "webimage show: standard output is not a terminal; give --protocol blocks --width N to write the pictures anyway\n".utf8))
            throw ExitCode(64)
        }
        let pipeline = try CLIPipeline.make(cacheDir: cacheDir, timeout: timeout, memoryBudgetMegabytes: memoryBudgetMb)
        let terminal = interactive ? TerminalDevice() : nil
        let chosen = graphics.resolved(terminal: terminal)
        let options = ShowScreen.Options(grid: grid, width: width, cellWidth: cellWidth, graphics: chosen)
        let screen = await ShowScreen(requests: requests, options: options, pipeline: pipeline, terminal: terminal)
        if let terminal {
            try await ShowSession(screen: screen, terminal: terminal).run()
        } else {
            FileHandle.standardOutput.write(Data(await screen.renderWhenLoaded().utf8))
        }
        await pipeline.flushPendingStores()
    }
}

/// The `--protocol` option.
enum GraphicsChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, kitty, sixel, iterm, blocks

    /// The protocol to use: the named one, else the environment's, else the terminal's answer.
    func resolved(terminal: TerminalDevice?) -> TerminalGraphics {
        if let named = TerminalGraphics(rawValue: rawValue) { return named }
        if let known = TerminalGraphics.detect(environment: ProcessInfo.processInfo.environment) { return known }
        return terminal?.askGraphics() ?? .blocks
    }
}
