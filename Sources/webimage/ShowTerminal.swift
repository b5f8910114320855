import Foundation
import WebImageTerminal

/// The controlling terminal: raw keys, size, the alternate screen, and the graphics query.
final class TerminalDevice: Sendable {
    /// Columns, rows and the cell size in pixels (10×20 when the terminal does not say).
    struct Size: Equatable {
        var columns: Int, rows: Int
        var cell: CellSize
    }

    private let saved: termios?

    init() {
        var attributes = termios()
        saved = tcgetattr(STDIN_FILENO, &attributes) == 0 ? attributes : nil
    }

    var size: Size {
        var w = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0, w.ws_row > 0 else {
            return Size(columns: 80, rows: 24, cell: .typical)
        }
        let cell = w.ws_xpixel > 0 && w.ws_ypixel > 0
            ? CellSize(width: Int(w.ws_xpixel) / Int(w.ws_col), height: Int(w.ws_ypixel) / Int(w.ws_row)) : .typical
        return Size(columns: Int(w.ws_col), rows: Int(w.ws_row), cell: cell)
    }

    /// Keys one at a time, no echo; Ctrl-C still interrupts.
    func enterRawMode() {
        guard var raw = saved else { return }
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    func restore() {
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        if var saved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written <= 0 { if errno == EINTR || errno == EAGAIN { continue } else { return } }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Sends ``TerminalGraphics/query`` and reads the answer for up to 300 ms.
    func askGraphics() -> TerminalGraphics {
        guard var raw = saved else { return .blocks }
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { if var saved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) } }
        write(TerminalGraphics.query)
        var reply: [UInt8] = []
        let deadline = Date().addingTimeInterval(0.3)
        while Date() < deadline, !TerminalGraphics.replyIsComplete(reply) {
            var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count > 0 { reply += buffer.prefix(count) }
        }
        return TerminalGraphics.interpret(reply: reply)
    }
}
