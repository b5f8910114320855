/// Text a stranger chose — a URL, a list line, a file's metadata (an ICC profile's name), an
/// error quoting either — made safe to print to a terminal: control characters (C0 but newline
/// and tab, DEL, C1) and the bidirectional overrides are shown as `\u{…}` instead of being sent.
/// An escape sequence in a hostile file could otherwise retitle the window, clear the screen or
/// hide text (found by a red-team run, stop 49, in `info`, `show`, `fetch` and `prefetch`).
///
/// ```swift
/// print("failed: " + TerminalText.safe(line))
/// ```
enum TerminalText {
    static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// C0 controls but newline and tab, DEL, C1 controls, line and paragraph separators, and
    /// the bidirectional embeddings, overrides and isolates.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
