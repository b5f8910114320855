import Foundation

/// The records of several `fetch --jsonl` files, each input line once (``ReportMergeCommand``).
///
/// Two passes over the files, so that memory holds one small entry per input line rather than
/// the records: the first chooses, for each line and URL, the file and place of the record that
/// counts; the second reads the files again and hands out only those. A million lines cost about
/// 50 MB. Lines that are not records (a torn last line of a killed run, another file) are counted
/// in ``unreadable`` and left out.
struct RecordMerge {
    /// At most this many thumbnails in a merged report (about 20 MB of HTML).
    static let maxThumbnails = 10_000

    private struct Choice {
        var file: UInt32
        var index: UInt32
        var rank: UInt8
    }

    private let paths: [String]
    private var chosen: [Int: Choice] = [:]
    private(set) var unreadable = 0
    /// The latest `at` of any record: the longest run, when shards run side by side.
    private(set) var longestRun = 0.0
    var counted: Int { chosen.count }

    init(paths: [String]) throws {
        self.paths = paths
        for (file, path) in paths.enumerated() {
            try Self.read(path) { index, record in
                guard let record else { unreadable += 1; return }
                longestRun = max(longestRun, record.at ?? 0)
                let key = Self.key(record), rank = Self.rank(record.status)
                // Later files win ties: they ran later.
                if let old = chosen[key], old.rank > rank { return }
                chosen[key] = Choice(file: UInt32(file), index: UInt32(truncatingIfNeeded: index), rank: rank)
            }
        }
    }

    /// Calls `body` with each record that counts, file by file, in file order.
    func forEachCounted(_ body: (FetchRecord, String) throws -> Void) throws {
        for (file, path) in paths.enumerated() {
            try Self.read(path) { index, record in
                guard let record, let choice = chosen[Self.key(record)],
                      choice.file == UInt32(file), choice.index == UInt32(truncatingIfNeeded: index) else { return }
                try body(record, path)
            }
        }
    }

    /// The line and URL: one input line of one list.
    private static func key(_ record: FetchRecord) -> Int {
        var hasher = Hasher()
        hasher.combine(record.line)
        hasher.combine(record.url)
        return hasher.finalize()
    }

    /// Which outcome of one line counts when several files have it.
    static func rank(_ status: String) -> UInt8 {
        switch status {
        case "ok": 5
        case "skipped": 4
        case "failed", "invalid", "cancelled": 1
        default: 3  // opted out, duplicate, refused by robots.txt: decided, and not failures
        }
    }

    private static func read(_ path: String, _ body: (Int, FetchRecord?) throws -> Void) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(path)") }
        defer { try? handle.close() }
        let reader = LineReader(handle: handle)
        let decoder = JSONDecoder()
        var index = 0
        while let line = reader.next() {
            defer { index += 1 }
            guard case .text(let text) = line else { try body(index, nil); continue }
            if text.isEmpty { continue }
            try body(index, (try? decoder.decode(FetchRecord.self, from: Data(text.utf8)))?.checkedAfterReading())
        }
    }
}
