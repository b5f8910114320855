/// Where a CSV record ends, line by line, by the rules CSV.swift parses it with (and Python's
/// `csv`): a quote opens a quoted field only at the start of a field; inside one, `""` is a quote
/// and a quote before a delimiter or the line's end closes it; a quote anywhere else is a
/// character like any other. Only a line that ends inside an open quoted field continues on the
/// next line. (Counting the quotes instead once joined every line after `5" screen` into one
/// record, up to 64 KB of rows lost.)
///
/// ```swift
/// var scan = CSVRecordScan(delimiter: UInt8(ascii: ","))
/// scan.endsRecord(#"https://a.com/1.jpg,"a caption"#)   // false: the quoted field is open
/// scan.endsRecord(#"on two lines""#)                     // true
/// ```
struct CSVRecordScan {
    private enum State { case fieldStart, unquoted, quoted, quoteInQuoted }
    let delimiter: UInt8
    private var state = State.fieldStart

    init(delimiter: UInt8) {
        self.delimiter = delimiter
    }

    /// Reads one physical line (without its line ending); `true` when the record ends with it.
    mutating func endsRecord(_ line: String) -> Bool {
        let quote = UInt8(ascii: "\"")
        for byte in line.utf8 {
            switch state {
            case .fieldStart: state = byte == quote ? .quoted : byte == delimiter ? .fieldStart : .unquoted
            case .unquoted: if byte == delimiter { state = .fieldStart }
            case .quoted: if byte == quote { state = .quoteInQuoted }
            // `""` is a quote; a delimiter ends the field; anything else is kept, the field still open (CSV.swift).
            case .quoteInQuoted: state = byte == delimiter ? .fieldStart : .quoted
            }
        }
        if state == .quoted { return false }
        state = .fieldStart
        return true
    }
}
