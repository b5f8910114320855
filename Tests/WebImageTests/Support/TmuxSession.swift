import Foundation

/// A detached tmux session on its own server socket, running one command — the real terminal
/// the view-layer tests draw into (Debian's tmux, see scripts/setup).
struct TmuxSession {
    let socket = "webimage-test-\(UUID().uuidString.prefix(8))"
    let name = "show"

    /// Runs `body` with a new session and kills its server afterwards, whatever happened.
    static func with<T>(_ body: (TmuxSession) async throws -> T) async throws -> T {
        let session = TmuxSession()
        do {
            let result = try await body(session)
            await session.kill()
            return result
        } catch {
            await session.kill()
            throw error
        }
    }

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    /// Starts `command` (argv) in a `columns × rows` pane.
    func start(_ command: [String], columns: Int, rows: Int) async throws {
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // The server outlives this call and would hold a pipe open: no output is read here.
        try await tmux(["new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)", quoted], readOutput: false)
        try await tmux(["set-option", "-t", name, "remain-on-exit", "on"])
    }

    /// The pane's text with colours (`capture-pane -e -p`).
    func capture() async throws -> String { try await tmux(["capture-pane", "-e", "-p", "-t", name]) }

    func send(_ keys: String...) async throws { try await tmux(["send-keys", "-t", name] + keys) }

    /// Whether the command in the pane has exited.
    func paneIsDead() async throws -> Bool {
        try await tmux(["display-message", "-p", "-t", name, "#{pane_dead}"]).hasPrefix("1")
    }

    func kill() async { _ = try? await tmux(["kill-server"]) }

    /// Runs one tmux command. Spawned directly and awaited with `waitpid`: Foundation's
    /// `Process` notices a child's end when an inherited socket closes, and the tmux server the
    /// first command forks keeps that socket open, so `Process` would wait forever. Output goes
    /// through a file for the same reason (a pipe would stay open in the server).
    @discardableResult
    func tmux(_ arguments: [String], readOutput: Bool = true) async throws -> String {
        // On a thread of its own: `waitpid` blocks, and the cooperative pool has two threads here.
        let socket = self.socket
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try Self.run(socket: socket, arguments, readOutput: readOutput) })
            }
        }
    }

    private static func run(socket: String, _ arguments: [String], readOutput: Bool) throws -> String {
        let output = NSTemporaryDirectory() + "\(socket)-\(UUID().uuidString.prefix(8)).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        // Only stdio: the tmux server the first command forks lives on, and a socket of another
        // test it inherited would keep that test's connections open after their client closed them.
        let child = try SpawnedProgram(["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + arguments,
                                     output: readOutput ? .file(output) : .null)
        child.wait()
        return readOutput ? ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "") : ""
    }
}

/// A screen read back from `capture-pane -e -p`: each cell's character and colours.
struct CapturedScreen {
    struct Cell {
        var character: Character = " "
        var foreground: [Int]?  // r, g, b when set with 38;2
        var background: [Int]?
    }

    let rows: [[Cell]]
    private let lines: [Substring]

    init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // tmux writes a colour change only: a row continues with the previous row's colours.
        var state = (foreground: [Int]?.none, background: [Int]?.none)
        rows = lines.map { Self.parse($0, state: &state) }
    }

    /// Row `row` as captured, escape sequences included.
    func raw(_ row: Int) -> String { row < lines.count ? String(lines[row]) : "" }

    subscript(row: Int, column: Int) -> Cell? {
        guard row < rows.count, column < rows[row].count else { return nil }
        return rows[row][column]
    }

    /// The text of row `row`, colours dropped.
    func text(_ row: Int) -> String { row < rows.count ? String(rows[row].map(\.character)) : "" }

    var allText: String { rows.indices.map(text).joined(separator: "\n") }

    private static func parse(_ line: Substring, state: inout (foreground: [Int]?, background: [Int]?)) -> [Cell] {
        var cells: [Cell] = []
        var (foreground, background) = state
        defer { state = (foreground, background) }
        var scalars = line.unicodeScalars[...]
        while let scalar = scalars.first {
            scalars = scalars.dropFirst()
            guard scalar == "\u{1B}" else {
                cells.append(Cell(character: Character(scalar), foreground: foreground, background: background))
                continue
            }
            guard scalars.first == "[", let end = scalars.firstIndex(where: { $0.properties.isAlphabetic }) else { continue }
            let final = scalars[end]
            let parameters = String(String.UnicodeScalarView(scalars[scalars.index(after: scalars.startIndex)..<end]))
            scalars = scalars[scalars.index(after: end)...]
            guard final == "m" else { continue }
            var codes = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }[...]
            while let code = codes.popFirst() {
                switch code {
                case 0: foreground = nil; background = nil
                case 38, 48:
                    guard codes.popFirst() == 2, codes.count >= 3 else { continue }
                    let rgb = Array(codes.prefix(3))
                    codes = codes.dropFirst(3)
                    if code == 38 { foreground = rgb } else { background = rgb }
                case 39: foreground = nil
                case 49: background = nil
                default: break
                }
            }
        }
        return cells
    }
}
