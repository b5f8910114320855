import CSV
import Foundation

/// The rows of a CSV, TSV or JSONL `--input`, read one record at a time over a ``LineReader``:
/// never more than ``LineReader/maxLineLength`` bytes of one record in memory.
///
/// CSV and TSV records are parsed by CSV.swift (`CSVReader`, RFC 4180 quoting) one record at a
/// time: a record whose quotes are still open at the end of a line continues on the next, up to
/// the length limit. A record over it (a quote that never closes, a 100 MB line) is one
/// ``Row/invalid(line:raw:reason:)`` and reading resumes at the next line. JSONL lines are
/// parsed by `JSONSerialization`. The header (or, for JSONL, the first object) must name the
/// URL column and every other column asked for: ``InputRowsError`` at start when it does not.
///
/// ```swift
/// let rows = try InputRows(reader: LineReader(handle: handle), format: .csv, columns: DatasetColumns())
/// while let row = rows.next() { … }
/// ```
final class InputRows {
    enum Row {
        case row(line: Int, url: String, fields: SampleFields)
        case invalid(line: Int, raw: String, reason: String)
    }

    private let reader: LineReader
    private let format: InputFormat
    private let columns: DatasetColumns
    /// Column name to field index (CSV and TSV).
    private var index: [String: Int] = [:]
    /// Physical lines read so far.
    private var line = 0
    /// The first JSONL row, read at start to check its keys.
    private var pending: Row?

    init(reader: LineReader, format: InputFormat, columns: DatasetColumns) throws(InputRowsError) {
        self.reader = reader
        self.format = format
        self.columns = columns
        switch format {
        case .csv, .tsv: try readHeader()
        case .jsonl: try checkFirstObject()
        case .txt: break
        }
    }

    /// The next row, or `nil` at the end.
    func next() -> Row? {
        if let pending {
            self.pending = nil
            return pending
        }
        switch format {
        case .jsonl: return nextJSON()
        default: return nextDelimited()
        }
    }

    // MARK: CSV and TSV

    private var delimiter: UnicodeScalar { format == .tsv ? "\t" : "," }

    private func readHeader() throws(InputRowsError) {
        var header: [String]?
        while header == nil {
            guard let record = nextRecord() else { throw .noHeader }
            switch record {
            case .success(let record):
                if record.1.isEmpty { continue }
                header = Self.fields(of: record.1, delimiter: delimiter)
            case .failure(let failure): throw .badHeader(failure.reason)
            }
        }
        // The first column of that name counts; a byte-order mark before the first is dropped.
        for (position, name) in header!.enumerated() {
            let trimmed = name.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\u{FEFF}")))
            if index[trimmed] == nil { index[trimmed] = position }
        }
        let missing = columns.all.filter { index[$0] == nil }
        guard missing.isEmpty else { throw .missingColumns(missing, found: header!) }
    }

    private func nextDelimited() -> Row? {
        while let record = nextRecord() {
            switch record {
            case .failure(let failure):
                return .invalid(line: failure.line, raw: failure.raw, reason: failure.reason)
            case .success(let record):
                let (start, text) = record
                if text.isEmpty { continue }
                let values = Self.fields(of: text, delimiter: delimiter)
                func value(_ column: String?) -> String? {
                    guard let column, let position = index[column], position < values.count else { return nil }
                    return values[position]
                }
                return row(line: start, raw: text) { value($0) }
            }
        }
        return nil
    }

    /// A row from a column lookup; invalid without a URL value.
    private func row(line: Int, raw: String, _ value: (String) -> String?) -> Row {
        guard let url = value(columns.url).map({ $0.trimmingCharacters(in: .whitespaces) }), !url.isEmpty else {
            return .invalid(line: line, raw: raw, reason: "no value in the \"\(columns.url)\" column")
        }
        if raw.contains("\u{FFFD}") { return .invalid(line: line, raw: raw, reason: "not UTF-8 text") }
        var fields = SampleFields(caption: columns.caption.flatMap(value), key: columns.key.flatMap(value))
        for column in columns.save { fields.saved[column] = value(column) }
        return .row(line: line, url: url, fields: fields)
    }

    private struct RecordFailure: Error {
        var line: Int
        var raw: String
        var reason: String
    }

    /// One record's text (lines joined while a quote is open) and the line it starts on.
    private func nextRecord() -> Result<(Int, String), RecordFailure>? {
        var text = ""
        var start = 0
        var scan = CSVRecordScan(delimiter: UInt8(delimiter.value))
        while let next = reader.next() {
            line += 1
            if start == 0 { start = line }
            guard case .text(let part) = next else {
                return .failure(RecordFailure(line: start, raw: "(a record of over \(LineReader.maxLineLength) bytes)",
                                              reason: "longer than \(LineReader.maxLineLength) bytes (not read into memory)"))
            }
            if start != line { text += "\n" }
            text += part
            if scan.endsRecord(part) { return .success((start, text)) }
            if text.utf8.count > LineReader.maxLineLength {
                return .failure(RecordFailure(line: start, raw: String(text.prefix(80)) + "…",
                                              reason: "a quoted field still open after \(LineReader.maxLineLength) bytes"))
            }
        }
        guard start > 0 else { return nil }
        return .failure(RecordFailure(line: start, raw: String(text.prefix(80)), reason: "a quoted field never closes"))
    }

    /// The fields of one record, by CSV.swift.
    private static func fields(of record: String, delimiter: UnicodeScalar) -> [String] {
        guard let reader = try? CSVReader(string: record, hasHeaderRow: false, delimiter: delimiter) else { return [] }
        return reader.next() ?? []
    }

    // MARK: JSONL

    private func checkFirstObject() throws(InputRowsError) {
        guard let row = nextJSON() else { return }
        if case .invalid(_, _, let reason) = row, reason.hasPrefix("no value") {
            throw .missingColumns([columns.url], found: [])
        }
        pending = row
    }

    private func nextJSON() -> Row? {
        while let next = reader.next() {
            line += 1
            guard case .text(let text) = next else {
                return .invalid(line: line, raw: "(a line of over \(LineReader.maxLineLength) bytes)",
                                reason: "longer than \(LineReader.maxLineLength) bytes (not read into memory)")
            }
            if text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? [String: Any] else {
                return .invalid(line: line, raw: String(text.prefix(200)), reason: "not a JSON object")
            }
            return row(line: line, raw: String(text.prefix(200))) { Self.text(object[$0]) }
        }
        return nil
    }

    /// A JSON value as text: strings as they are, numbers and booleans printed, other values as
    /// JSON, `null` as absent.
    private static func text(_ value: Any?) -> String? {
        guard let value, !(value is NSNull) else { return nil }
        if let string = value as? String { return string }
        if let bool = value as? Bool, type(of: value) == Bool.self { return bool ? "true" : "false" }
        if let number = value as? NSNumber { return number.stringValue }
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Why a CSV, TSV or JSONL `--input` cannot be read at all (a bad row is only that row's failure).
enum InputRowsError: Error, CustomStringConvertible {
    case noHeader
    case badHeader(String)
    case missingColumns([String], found: [String])

    var description: String {
        switch self {
        case .noHeader: "the input has no header row (CSV and TSV lists start with the column names)"
        case .badHeader(let reason): "the input's header row cannot be read: \(reason)"
        case .missingColumns(let missing, let found):
            "the input has no column \(missing.map { "\"\($0)\"" }.joined(separator: ", "))"
                + (found.isEmpty ? "" : " (its columns: \(found.prefix(20).joined(separator: ", ")))")
                + "; name the URL column with --url-col"
        }
    }
}
