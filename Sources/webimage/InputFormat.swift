import Foundation

/// `fetch --input-format`: how the `--input` list is read. `txt` is one URL a line (blank lines
/// and `#` comments skipped); `csv` and `tsv` have a header row naming the columns; `jsonl` is
/// one JSON object a line. Without the option the file's extension chooses (`.csv`, `.tsv`,
/// `.jsonl`/`.json`; anything else, and standard input, is `txt`).
enum InputFormat: String, CaseIterable, Sendable {
    case txt, csv, tsv, jsonl

    /// The format a file's extension names; `txt` for any other (and for `-`, standard input).
    static func of(path: String) -> InputFormat {
        switch (path as NSString).pathExtension.lowercased() {
        case "csv": .csv
        case "tsv": .tsv
        case "jsonl", "json", "ndjson": .jsonl
        default: .txt
        }
    }

    /// Whether the rows have named columns (`--url-col`, `--caption-col`, …).
    var hasColumns: Bool { self != .txt }
}

/// The columns `fetch` reads from a CSV, TSV or JSONL list: img2dataset's option names
/// (`--url-col`, default `url`; `--caption-col`; `--key-col`; `--save-cols a,b`).
struct DatasetColumns: Sendable {
    var url = "url"
    var caption: String?
    var key: String?
    var save: [String] = []

    /// Every column a row is read for, the URL's first.
    var all: [String] { [url] + [caption, key].compactMap { $0 } + save }

    /// Field names of a sample's JSON that a saved column may not take.
    static let reservedNames: Set<String> = ["key", "url", "status", "error_message", "size", "width", "height", "format", "caption"]
}

/// The dataset fields of one input row: carried into its sample (`--output-format webdataset`).
struct SampleFields: Sendable {
    var caption: String?
    var key: String?
    /// `--save-cols`: column name to value (absent when the row has no value for it).
    var saved: [String: String] = [:]
    /// `--retry-failed`: the key the earlier run gave the sample, kept as it is (already safe).
    var recordedKey: String?
}
