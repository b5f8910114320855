import ArgumentParser
import Foundation

/// `webimage report`: work on the records `fetch --jsonl` leaves behind.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Summarise the records of fetch runs (--jsonl files).",
        subcommands: [ReportMergeCommand.self])
}

/// `webimage report merge RUN1.jsonl RUN2.jsonl …`: one summary (and one HTML report) of the
/// shards of a list fetched by several processes or machines (`fetch --shard K/N`), or of a
/// run and its resumptions.
struct ReportMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the --jsonl records of several fetch runs (shards, resumed runs) into one summary and report.",
        discussion: """
            Each input line counts once: when two files hold a record of the same line and URL (a shard \
            run again with --skip-existing, say), the best outcome counts (ok, then skipped — the file was \
            already there —, then opted-out, duplicate and other non-failures, then failures), and among \
            equals the later file's. The time is the longest run's (shards run side by side).
            """)

    @Argument(help: "The --jsonl files of the runs, in the order they ran.")
    var files: [String]

    @Option(name: .long, help: "Write one HTML report (contact sheet and charts) of every run to this file.")
    var report: String?

    @Option(name: .long, help: "Where the runs wrote their images, for the report's thumbnails (default: each file's own folder).")
    var outputDir: String?

    @Flag(name: .long, help: "Print the summary as one JSON object.")
    var json = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one --jsonl file") }
    }

    func run() throws {
        let merged = try RecordMerge(paths: files)
        var summary = FetchSummary()
        let sheet = report.map { FetchReport(path: $0) }
        var thumbnails = 0
        try merged.forEachCounted { record, path in
            summary.record(record)
            guard let sheet else { return }
            var thumbnail: String?
            if record.status == "ok", let file = record.file, thumbnails < RecordMerge.maxThumbnails {
                let folder = outputDir.map { URL(fileURLWithPath: $0) } ?? URL(fileURLWithPath: path).deletingLastPathComponent()
                // Only a regular file (a FIFO or a device would block or never end), mapped, not read.
                let url = folder.appendingPathComponent(file)
                if (try? FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType) == .typeRegular,
                   let data = try? Data(contentsOf: url, options: .mappedIfSafe) {
                    thumbnail = FetchReport.thumbnail(of: data, side: FetchReport.thumbnailSide(expected: merged.counted))
                    thumbnails += 1
                }
            }
            sheet.add(record, thumbnail: thumbnail, at: record.at ?? 0)
        }
        summary.seconds = merged.longestRun
        try sheet?.write(summary: summary)
        if merged.unreadable > 0 {
            let lines = merged.unreadable == 1 ? "1 line was not a fetch record" : "\(merged.unreadable) lines were not fetch records"
            FileHandle.standardError.write(Data("webimage: \(lines) and \(merged.unreadable == 1 ? "was" : "were") left out\n".utf8))
        }
        print(json ? try summary.json() : summary.line)
    }
}
