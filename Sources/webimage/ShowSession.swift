import Dispatch
import Foundation

/// The interactive loop of `webimage show`: keys, terminal resizes and interrupts, in order,
/// on the main actor.
struct ShowSession {
    enum Event: Sendable { case next, previous, pause, quit, resize }

    let screen: ShowScreen
    let terminal: TerminalDevice

    @MainActor
    func run() async throws {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        terminal.enterRawMode()
        defer { terminal.restore() }
        let signals = Self.watchSignals(into: continuation)
        defer { signals.forEach { $0.cancel() } }
        Self.startKeyReader(into: continuation)
        screen.showPage(0)
        for await event in events {
            switch event {
            case .next: screen.showPage(screen.page + 1)
            case .previous: screen.showPage(screen.page - 1)
            case .pause: screen.togglePause()
            case .resize: screen.resize()
            case .quit:
                screen.stop()
                return
            }
        }
    }

    /// SIGWINCH → resize, SIGINT and SIGTERM → quit (so the terminal is restored). Not on the
    /// main actor: the handlers run on a dispatch queue.
    static func watchSignals(into continuation: AsyncStream<Event>.Continuation) -> [any DispatchSourceSignal] {
        [SIGWINCH, SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield(number == SIGWINCH ? .resize : .quit) }
            source.resume()
            return source
        }
    }

    /// Reads keys on a thread of its own (a blocking read), never on the main actor.
    static func startKeyReader(into continuation: AsyncStream<Event>.Continuation) {
        Thread { readKeys(into: continuation) }.start()
    }

    /// Reads standard input byte by byte and turns keys into events.
    static func readKeys(into continuation: AsyncStream<Event>.Continuation) {
        var pending: [UInt8] = []
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1 {
            pending.append(byte)
            switch KeyParser.parse(pending) {
            case .incomplete: continue
            case .unknown: pending.removeAll()
            case .event(let event):
                pending.removeAll()
                continuation.yield(event)
                if case .quit = event { return }
            }
        }
        continuation.yield(.quit)  // end of input
    }
}

/// Keys → events: letters, space, and the arrow and page escape sequences.
enum KeyParser {
    enum Result: Equatable { case incomplete, unknown, event(ShowSession.Event) }

    static func parse(_ bytes: [UInt8]) -> Result {
        switch bytes {
        case [UInt8(ascii: "n")], [UInt8(ascii: "j")]: return .event(.next)
        case [UInt8(ascii: "p")], [UInt8(ascii: "k")]: return .event(.previous)
        case [UInt8(ascii: " ")]: return .event(.pause)
        case [UInt8(ascii: "q")], [3]: return .event(.quit)
        case [0x1B], [0x1B, UInt8(ascii: "[")], [0x1B, UInt8(ascii: "["), UInt8(ascii: "5")], [0x1B, UInt8(ascii: "["), UInt8(ascii: "6")]:
            return .incomplete
        default: break
        }
        guard bytes.count >= 3, bytes[0] == 0x1B, bytes[1] == UInt8(ascii: "[") else { return .unknown }
        switch Array(bytes.dropFirst(2)) {
        case [UInt8(ascii: "C")], [UInt8(ascii: "B")], [UInt8(ascii: "6"), UInt8(ascii: "~")]: return .event(.next)
        case [UInt8(ascii: "D")], [UInt8(ascii: "A")], [UInt8(ascii: "5"), UInt8(ascii: "~")]: return .event(.previous)
        default: return .unknown
        }
    }
}

extension ShowSession.Event: Equatable {}
