import Foundation

/// A virtual X display (Debian's Xvfb) on which real terminal emulators — xterm, kitty, mlterm —
/// draw what `webimage show` writes, read back as pixels with `xwd`.
///
/// The display has no window manager, so a terminal's window sits at the top-left corner of the
/// screen. Xvfb picks a free display number itself (`-displayfd`), so tests never collide.
struct XDisplay: Sendable {
    let number: Int
    private let server: SpawnedProgram

    static var isAvailable: Bool {
        ["/usr/bin/Xvfb", "/usr/bin/xwd", "/usr/bin/xwininfo"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }

    /// Starts a display of `width × height` pixels, runs `body`, and stops the display and every
    /// program started on it, whatever happened.
    static func with<T>(width: Int = 1024, height: Int = 768, _ body: (XDisplay) async throws -> T) async throws -> T {
        let display = try await start(width: width, height: height)
        defer { display.server.kill() }
        return try await body(display)
    }

    private static func start(width: Int, height: Int) async throws -> XDisplay {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw XError(description: "pipe failed: errno \(errno)") }
        // -displayfd 1: Xvfb writes its display number to standard output once it accepts clients.
        let server = try SpawnedProgram(
            ["/usr/bin/Xvfb", "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"],
            output: .descriptor(ends[1]))
        close(ends[1])
        let reader = ends[0]
        let line = await offPool { () -> String in
            defer { close(reader) }
            var text: [UInt8] = [], byte: UInt8 = 0
            // Ends at the newline, or when Xvfb exits (its end of the pipe closes).
            while !text.contains(UInt8(ascii: "\n")), read(reader, &byte, 1) == 1 { text.append(byte) }
            return String(decoding: text, as: UTF8.self)
        }
        guard let number = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            server.kill()
            throw XError(description: "Xvfb did not report a display number (\(line.debugDescription))")
        }
        return XDisplay(number: number, server: server)
    }

    /// Starts `arguments` (a terminal emulator and its command) on this display with `environment`
    /// added; standard output and error go to `log`. Stopping the display ends it too (it loses
    /// its connection); ``SpawnedProgram/kill()`` ends it sooner.
    func launch(_ arguments: [String], environment extra: [String: String] = [:], log: URL) throws -> SpawnedProgram {
        var environment = ProcessInfo.processInfo.environment
        for name in ["TMUX", "TERM_PROGRAM", "KITTY_WINDOW_ID", "STY", "WAYLAND_DISPLAY", "COLUMNS", "LINES"] {
            environment[name] = nil
        }
        environment["DISPLAY"] = ":\(number)"
        environment.merge(extra) { $1 }
        return try SpawnedProgram(arguments, environment: environment, output: .file(log.path), error: .file(log.path))
    }

    /// What the terminal's window shows now: the largest top-level window (`xwininfo`), dumped
    /// with `xwd -id`, or nil while no window is mapped. The window sits at the screen's top-left
    /// corner (no window manager), so its pixels are the screen's. A root-window dump would do
    /// for xterm but not for kitty: Xvfb hands back its OpenGL-drawn window garbled in a root dump.
    func screenshot() async throws -> Screenshot? {
        let display = ":\(number)"
        return try await offPool { () throws -> Screenshot? in
            let tree = String(decoding: try Self.run(["/usr/bin/xwininfo", "-root", "-children", "-display", display]), as: UTF8.self)
            // Lines such as `     0x20000c "webimage": ("kitty" "kitty")  641x409+0+0  +0+0`.
            let windows = tree.split(separator: "\n").compactMap { line -> (id: String, area: Int)? in
                let words = line.split(separator: " ")
                guard let id = words.first, id.hasPrefix("0x"),
                      let size = words.last(where: { $0.contains("x") && $0.contains("+") && !$0.hasPrefix("0x") }),
                      let geometry = size.split(separator: "+").first else { return nil }
                let sides = geometry.split(separator: "x").compactMap { Int($0) }
                return sides.count == 2 ? (String(id), sides[0] * sides[1]) : nil
            }
            guard let window = windows.max(by: { $0.area < $1.area }), window.area > 1 else { return nil }
            let dump = try Self.run(["/usr/bin/xwd", "-id", window.id, "-silent", "-display", display])
            // Nothing when the window went away between the listing and the dump (a terminal starting
            // up may replace its first window; seen once with kitty on a loaded machine): not yet.
            guard !dump.isEmpty else { return nil }
            return try Screenshot(xwd: dump)
        }
    }

    /// Runs a short X client to its end and returns its standard output.
    private static func run(_ arguments: [String]) throws -> Data {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    struct XError: Error, CustomStringConvertible { var description: String }
}
