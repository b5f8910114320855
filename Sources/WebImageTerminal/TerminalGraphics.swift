
/// How pictures reach the terminal, and how `auto` picks one.
///
/// ```swift
/// let graphics = TerminalGraphics.detect(environment: ProcessInfo.processInfo.environment)
///     ?? TerminalGraphics.interpret(reply: bytesTheTerminalAnswered)
/// ```
public enum TerminalGraphics: String, Sendable, CaseIterable {
    case kitty, sixel, iterm, blocks

    /// The encoder for this protocol.
    public func encoder(imageID: UInt32 = 1) -> any TerminalImageEncoding {
        switch self {
        case .kitty: KittyEncoder(imageID: imageID)
        case .sixel: SixelEncoder()
        case .iterm: ITermEncoder()
        case .blocks: HalfBlockEncoder()
        }
    }

    /// The protocol the environment names, or nil when only asking the terminal can tell.
    ///
    /// `KITTY_WINDOW_ID` or a kitty/Ghostty `TERM` → kitty; `TERM_PROGRAM` iTerm.app, WezTerm or
    /// mintty → iTerm2 images; foot, mlterm, contour → sixel; inside tmux or screen (which pass
    /// neither kitty nor iTerm2 sequences by default), a dumb or missing `TERM` → half-blocks.
    public static func detect(environment: [String: String]) -> TerminalGraphics? {
        let term = environment["TERM"]?.lowercased() ?? ""
        let program = environment["TERM_PROGRAM"]?.lowercased() ?? ""
        if environment["TMUX"] != nil || term.hasPrefix("screen") || term.hasPrefix("tmux") { return .blocks }
        if environment["KITTY_WINDOW_ID"] != nil || term.contains("kitty") || term.contains("ghostty") { return .kitty }
        if ["iterm.app", "wezterm", "mintty"].contains(program) { return .iterm }
        if ["foot", "mlterm", "contour"].contains(where: term.hasPrefix) { return .sixel }
        if term.isEmpty || term == "dumb" || term == "linux" { return .blocks }
        return nil
    }

    /// Sent to a terminal to ask: a kitty graphics query (answered only by terminals that speak
    /// it) followed by Primary Device Attributes (answered by all; a `4` parameter means sixel).
    public static let query = "\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\\u{1B}[c"

    /// What the terminal's reply to ``query`` says; half-blocks when it says nothing useful.
    public static func interpret(reply: [UInt8]) -> TerminalGraphics {
        let text = String(decoding: reply, as: UTF8.self)
        if text.contains("\u{1B}_Gi=31;OK") { return .kitty }
        if let start = text.range(of: "\u{1B}[?"), let end = text[start.upperBound...].firstIndex(of: "c") {
            let parameters = text[start.upperBound..<end].split(separator: ";")
            if parameters.contains("4") { return .sixel }
        }
        return .blocks
    }

    /// Whether `reply` holds the end of the device-attributes answer (the query is complete).
    public static func replyIsComplete(_ reply: [UInt8]) -> Bool {
        let text = String(decoding: reply, as: UTF8.self)
        guard let start = text.range(of: "\u{1B}[?") else { return false }
        return text[start.upperBound...].contains("c")
    }
}
