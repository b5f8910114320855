import ArgumentParser
import ConsoleKitTerminal
import Foundation
import WebImage

struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Warm the disk cache: download images' original bytes into it without decoding them.")

    @Argument(help: "Image URLs (a URL given twice is prefetched once).")
    var urls: [String] = []

    @Option(name: .long, help: "A file with one URL per line ('-' reads standard input).")
    var input: String?

    @Option(name: .long, help: "Disk cache directory (default: $XDG_CACHE_HOME/webimage or ~/.cache/webimage).")
    var cacheDir: String?

    @Option(name: .long, help: "Images loaded at once (default 3).")
    var concurrency: Int = 3

    @Flag(name: .long, help: "Print the summary as one JSON object.")
    var json = false

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
    }

    func run() async throws {
        var seen = Set<String>()
        let list = try (urls + URLList.read(input)).filter { seen.insert($0).inserted }
        guard !list.isEmpty else { throw ValidationError("no URLs given (pass them as arguments or with --input)") }
        let pipeline = try CLIPipeline.make(cacheDir: cacheDir, concurrency: concurrency)
        let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache, maxConcurrent: concurrency)
        let progress = !json && isatty(STDOUT_FILENO) == 1 ? Terminal().progressBar(title: "Prefetching \(list.count) images") : nil
        progress?.start()

        let started = ContinuousClock.now
        var summary = PrefetchSummary(requested: list.count)
        var valid: [URL] = []
        for raw in list {
            if let url = URL(string: raw), url.scheme != nil { valid.append(url) } else { summary.failures.append(.init(url: raw, error: "invalid URL")) }
        }
        let events = prefetcher.events()  // before starting, so no event is missed
        prefetcher.startPrefetching(valid)
        var done = summary.failures.count
        if !valid.isEmpty {
            loop: for await event in events {
                switch event {
                case .finished(let url, let result):
                    if case .failure(let error) = result { summary.failures.append(.init(url: url.absoluteString, error: "\(error)")) }
                    done += 1
                    progress?.activity.currentProgress = Double(done) / Double(list.count)
                case .allDone(let counts):
                    summary.finished = counts.finished
                    break loop
                }
            }
        }
        await pipeline.flushPendingStores()  // the disk cache's writes, before the process ends
        summary.seconds = (ContinuousClock.now - started).secondsValue
        summary.skipped = summary.failures.count
        if summary.failures.isEmpty { progress?.succeed() } else { progress?.fail() }
        if json {
            print(try summary.json())
        } else {
            for failure in summary.failures { print(TerminalText.safe("failed: \(failure.url): \(failure.error)")) }
            print(summary.line)
        }
        // As `fetch`: 3 is "went through the list, some images failed" (1 is an error that stopped it).
        if !summary.failures.isEmpty { throw ExitCode(FetchExit.someLinesFailed) }
    }
}
