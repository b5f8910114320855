import Foundation
import WebImage

/// The URLs of one `fetch`, read one line at a time: arguments first, then the `--input` file
/// or standard input. Never holds the list: any number of lines cost one read buffer plus the
/// URLs already seen (for duplicates: ``SeenURLs``, 61 MB at most).
///
/// Each line becomes an ``Entry``: blank lines and `#` comments are skipped; a line that is not
/// an `http`/`https` URL with a host, or is longer than ``LineReader/maxLineLength`` (64 KB; it
/// is skipped over, never held whole), is ``Entry/Kind/invalid``; a URL met before is
/// ``Entry/Kind/duplicate`` (fetched once, reported again with the first one's line while
/// ``SeenURLs`` keeps lines, past 1.5 million distinct URLs without it); with
/// `--shard K/N`, URLs of other shards are dropped silently. A CSV, TSV or JSONL `--input` is
/// read by ``InputRows`` (its line numbers are the file's); its entries carry the row's
/// ``SampleFields``, and datasets turn duplicate detection off (every row is a sample).
struct URLSource {
    struct Entry {
        enum Kind {
            case fetch(URL)
            case invalid(reason: String)
            /// The line that met the URL first, when it is known.
            case duplicate(ofLine: Int?)
        }

        /// 1-based position in the input: arguments first, then the file's lines.
        var line: Int
        var raw: String
        var kind: Kind
        /// The row's caption, key and saved columns (CSV, TSV and JSONL inputs).
        var fields = SampleFields()
    }

    private var arguments: IndexingIterator<[String]>
    private var reader: LineReader?
    /// The rows of a CSV, TSV or JSONL input (then `reader` is `nil`).
    private var rows: InputRows?
    /// `--retry-failed`: the failed lines of an earlier run (then there is no other input).
    private var failed: FailedLines?
    /// Whether a URL met before is reported as a duplicate (not for datasets: every row is a sample).
    private let deduplicate: Bool
    private var line = 0
    /// The URLs met so far, in bounded memory (``SeenURLs``).
    private var seen = SeenURLs()
    let shard: Shard?

    init(arguments: [String], input: String?, shard: Shard?, format: InputFormat = .txt, columns: DatasetColumns = DatasetColumns(),
         deduplicate: Bool = true, retryFailed: String? = nil) throws {
        self.arguments = arguments.makeIterator()
        self.shard = shard
        self.deduplicate = deduplicate
        if let retryFailed { failed = try FailedLines(path: retryFailed) }
        guard let input else { return }
        let lines: LineReader
        if input == "-" {
            lines = LineReader(handle: .standardInput)
        } else {
            guard let handle = FileHandle(forReadingAtPath: input) else { throw CLIError("cannot read \(input): no such file or not readable") }
            lines = LineReader(handle: handle)
        }
        if format.hasColumns {
            do { rows = try InputRows(reader: lines, format: format, columns: columns) } catch { throw CLIError("\(input): \(error)") }
        } else {
            reader = lines
        }
    }

    /// The next entry, or `nil` at the end of the list.
    mutating func next() -> Entry? {
        while true {
            let text: String
            if let argument = arguments.next() {
                text = argument
            } else if let failed {
                // Each keeps its line number of the earlier run.
                guard let next = failed.next() else { return nil }
                guard var entry = check(next.url, line: next.line) else { continue }
                entry.fields = next.fields
                return entry
            } else if let rows {
                switch rows.next() {
                case nil: return nil
                // Line numbers of the file follow the arguments' (as for plain lists).
                case .invalid(let at, let raw, let reason): return Entry(line: line + at, raw: raw, kind: .invalid(reason: reason))
                case .row(let at, let url, let fields):
                    guard var entry = check(url, line: line + at) else { continue }
                    entry.fields = fields
                    return entry
                }
            } else if let fromFile = reader?.next() {
                guard case .text(let read) = fromFile else {
                    line += 1
                    return Entry(line: line, raw: "(a line of over \(LineReader.maxLineLength) bytes)", kind: .invalid(
                        reason: "longer than \(LineReader.maxLineLength) bytes (not read into memory)"))
                }
                text = read
            } else {
                return nil
            }
            line += 1
            let raw = text.trimmingCharacters(in: .whitespaces)
            if raw.isEmpty || raw.hasPrefix("#") { continue }
            if let entry = check(raw, line: line) { return entry }
        }
    }

    /// The longest URL fetched, in bytes.
    static let maxURLBytes = 8192

    /// The entry of one URL: invalid, a duplicate or one to fetch; `nil` when another shard takes it.
    private mutating func check(_ raw: String, line: Int) -> Entry? {
        // Before anything reads it: a longer URL fails at most servers anyway (`414`), and
        // matching one against a host's robots.txt costs its length times the host's rules.
        guard raw.utf8.count <= Self.maxURLBytes else {
            return Entry(line: line, raw: String(raw.prefix(200)) + "…", kind: .invalid(
                reason: "a URL of over \(Self.maxURLBytes) bytes (servers refuse request lines that long: nginx and Apache at 8 KB)"))
        }
        guard let url = URL(string: raw), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            return Entry(line: line, raw: raw, kind: .invalid(reason: "not an http(s) URL"))
        }
        if let shard, !shard.contains(raw) { return nil }
        guard deduplicate else { return Entry(line: line, raw: raw, kind: .fetch(url)) }
        switch seen.check(raw, line: line) {
        case .repeated(let first): return Entry(line: line, raw: raw, kind: .duplicate(ofLine: first))
        case .new:
            if seen.unremembered == 1 {
                FileHandle.standardError.write(Data(
                    "warning: over 11.5 million distinct URLs: later ones are not remembered, so their repeats are fetched again\n".utf8))
            }
            return Entry(line: line, raw: raw, kind: .fetch(url))
        }
    }

    /// Counts the lines of a regular `--input` file (for the progress bar); `nil` for standard input.
    static func lineCount(_ input: String?) -> Int? {
        guard let input, input != "-", let handle = FileHandle(forReadingAtPath: input) else { return nil }
        var count = 0
        while let chunk = try? handle.read(upToCount: 1 << 16), !chunk.isEmpty {
            count += chunk.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
        }
        return count
    }
}

/// `--shard K/N`: this process takes the URLs whose stable hash modulo N is K − 1, so N
/// processes (or hosts) given the same list split it without overlap or loss.
struct Shard: Sendable {
    var index: Int
    var count: Int

    /// Parses `K/N` with 1 ≤ K ≤ N.
    init?(_ text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(k) else { return nil }
        index = k - 1
        count = n
    }

    func contains(_ url: String) -> Bool { Int(StableHash.of(url) % UInt64(count)) == index }
}

/// FNV-1a, 64 bits, over the UTF-8 bytes: the same on every machine and in every run (Swift's
/// `Hasher` is seeded per process), for shards and `{hash}` file names.
enum StableHash {
    static func of(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    static func hex(_ text: String) -> String {
        let value = String(of(text), radix: 16)
        return String(repeating: "0", count: 16 - value.count) + value
    }
}
