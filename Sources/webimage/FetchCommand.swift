import ArgumentParser
import ConsoleKitTerminal
import Foundation
import WebImage

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images through the pipeline and write their original bytes to a directory.")

    @Argument(help: "Image URLs (then those of --input).")
    var urls: [String] = []

    @Option(name: .long, help: "A file with one URL per line, or a CSV, TSV or JSONL list (see --input-format; '-' reads standard input).")
    var input: String?

    @Option(name: .long, help: "Directory the images are written to.")
    var output: String

    @Option(name: .long, help: "How --input is read: txt (one URL a line), csv, tsv (a header row names the columns) or jsonl (one object a line); default from the file's extension.")
    var inputFormat: String?

    @Option(name: .long, help: "The URL column of a csv, tsv or jsonl input (default url).")
    var urlCol: String?

    @Option(name: .long, help: "The caption column (webdataset: {key}.txt and the JSON's caption).")
    var captionCol: String?

    @Option(name: .long, help: "The column whose values name the samples (default: shard and place numbers, as img2dataset).")
    var keyCol: String?

    @Option(name: .long, help: "Columns carried into each sample's JSON, comma-separated (e.g. width,license).")
    var saveCols: String?

    @Option(name: .long, help: "files (one file per image, the default) or webdataset (tar shards of --shard-size samples).")
    var outputFormat: String = "files"

    @Option(name: .long, help: "Samples per webdataset shard (default 10000).")
    var shardSize: Int = 10_000

    @Option(name: .long, help: "Images loaded at once.")
    var concurrency: Int = 6

    @Option(name: .long, help: "Disk cache directory (default: $XDG_CACHE_HOME/webimage or ~/.cache/webimage).")
    var cacheDir: String?

    @Option(name: .long, help: "Refuse bodies larger than this many megabytes (default 50).")
    var maxBodyMb: Int?

    @Flag(name: .long, help: "Print the summary as one JSON object.")
    var json = false

    @Option(name: .long, help: "Write thumbnails that fit inside WIDTHxHEIGHT (aspect kept, never enlarged).")
    var resize: String?

    @Option(name: .long, help: "Re-encode as jpeg, png, webp, gif, avif or apng (the file extension follows).")
    var format: String?

    @Option(name: .long, help: "Quality of lossy output (jpeg, lossy webp, avif), 1-100 (default 85); with --resize, --format or --process.")
    var quality: Int?

    @Option(name: .long, help: "Process each image, e.g. resize:256x256:fill,round:12,blur:2 (also resize:256x256:fill:sm for the smart crop, grayscale, rotate:90, crop:X,Y,W,H, crop:square, circle, flip:h, tint:RRGGBBAA).")
    var process: String?

    @Option(name: .long, help: "Colour profiles of re-encoded output: srgb converts to sRGB (default), keep leaves pixels and embeds the profile, ignore drops it.")
    var color: String?

    @Flag(name: .long, help: "Decode every image fully and fail the undecodable ones (otherwise only the header is read).")
    var verify = false

    @Flag(name: .long, help: "Write images whose server opted them out with X-Robots-Tag (noai, noimageai, noindex, noimageindex); by default they are skipped and reported as opted-out.")
    var ignoreOptOut = false

    @Flag(name: .long, help: "Do not read robots.txt: fetch URLs it disallows for webimage (a warning is printed). By default they are skipped and reported as robots-disallowed.")
    var ignoreRobots = false

    @Option(name: .long, help: "The User-Agent header, best with a way to reach you (default: \(CLIUserAgent.default)). robots.txt groups and X-Robots-Tag directives for webimage and for this value's product token (its first word, up to '/') apply.")
    var userAgent: String?

    @Flag(name: .long, help: "Never use the network: images not in the cache fail.")
    var cacheOnly = false

    @Flag(name: .long, help: "Ignore the caches and download everything again (the results are stored).")
    var reload = false

    @Flag(name: .long, help: "Revalidate every cached entry with the origin once (conditional requests).")
    var refresh = false

    @Flag(name: .long, help: "Neither read nor write the disk cache.")
    var noCache = false

    @Option(name: .long, help: "Disk cache size limit in megabytes (default 500).")
    var cacheSizeMb: Int?

    @Option(name: .long, help: "Freshness, in seconds, of responses that state none (default 604800, 7 days).")
    var cacheMaxAge: Int?

    @Flag(name: .long, help: "Resume an interrupted run: URLs whose file an earlier run into this folder finished (same size) are not fetched again.")
    var skipExisting = false

    @Option(name: .long, help: "Retries per line in all (default 2): after transient failures (timeouts, 5xx, 429, with exponential backoff) and after its host's Retry-After pause; a line is requested at most 1 + N times.")
    var retries: Int?

    @Option(name: .long, help: "The longest Retry-After (seconds) a host is waited for (default 300): a 429 or 503 asking for longer fails its line, and the host's other lines are not requested in this run (recorded failed, for --retry-failed later).")
    var maxRetryAfter: Double = 300

    @Option(name: .long, help: "At most this many images of one host at once.")
    var perHost: Int?

    @Option(name: .long, help: "At most N requests a second to one host, as N or N/s (e.g. 2/s, 0.5); retries count. A 429 or 503 with Retry-After pauses the whole host in any case.")
    var ratePerHost: String?

    @Option(name: .long, help: "Seconds allowed for each attempt, body included (default 15).")
    var timeout: Double?
    @Option(name: .customLong("memory-budget-mb"), help: "Memory decoded images may take at once, in MB; decodes wait for room (default: half the cgroup limit or of physical memory).")
    var memoryBudgetMb: Int?

    @Option(name: .long, help: "K/N: fetch only this process's share of the list (a stable hash of each URL picks its shard, 1 ≤ K ≤ N).")
    var shard: String?

    @Option(name: .long, help: "Write one JSON line per input line to FILE: line, url, status, file, format, width, height, bytes, ms, source, error.")
    var jsonl: String?

    @Option(name: .long, help: "Fetch only the lines an earlier run's --jsonl FILE recorded as failed (each keeps its line number); no other URLs or --input.")
    var retryFailed: String?

    @Option(name: .long, help: "Write an HTML contact sheet of the run to FILE (self-contained: thumbnails, failures, charts).")
    var report: String?

    @Option(name: .long, help: "Images shown on the --report sheet at most, 1…100000 (default 10000); the totals and charts count them all.")
    var reportImages = FetchReport.defaultCells

    @Option(name: .long, help: "File name template: {index} (input line), {hash} (of the URL), {basename}, {ext} (the format's), e.g. {index}-{basename}.{ext}.")
    var name: String?

    @Option(name: .long, help: "Exit 0 when at most this share of the lines failed, R from 0 to 1 or N% (1: never exit 3, as img2dataset). Exit status: 0 done, 3 done but some lines failed, 1 an error stopped the run or an image could not be written, 64 usage, 130 interrupted.")
    var maxFailureRate: String?

    func validate() throws {
        if let userAgent { try CLIUserAgent.validate(userAgent) }
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
        guard (1...FetchReport.maxCells).contains(reportImages) else { throw ValidationError("--report-images must be 1…\(FetchReport.maxCells)") }
        guard cacheSizeMb.map({ $0 > 0 }) ?? true else { throw ValidationError("--cache-size-mb must be at least 1") }
        guard cacheMaxAge.map({ $0 >= 0 }) ?? true else { throw ValidationError("--cache-max-age must not be negative") }
        guard retries.map({ $0 >= 0 }) ?? true else { throw ValidationError("--retries must not be negative") }
        guard perHost.map({ $0 > 0 }) ?? true else { throw ValidationError("--per-host must be at least 1") }
        guard ratePerHost.map({ Self.interval(rate: $0) != nil }) ?? true else {
            throw ValidationError("--rate-per-host expects N or N/s with 0.001 ≤ N ≤ 10000, such as 2/s")
        }
        guard maxRetryAfter.isFinite, (0...86_400).contains(maxRetryAfter) else { throw ValidationError("--max-retry-after must be from 0 to 86400 seconds") }
        guard timeout.map({ $0 > 0 && $0.isFinite }) ?? true else { throw ValidationError("--timeout must be a positive number of seconds") }
        guard shard.map({ Shard($0) != nil }) ?? true else { throw ValidationError("--shard expects K/N with 1 ≤ K ≤ N, such as 2/4") }
        guard maxFailureRate.map({ FetchExit.rate($0) != nil }) ?? true else {
            throw ValidationError("--max-failure-rate expects a share from 0 to 1 or a percentage, such as 0.1 or 10%")
        }
        if let name, !OutputNames.placeholders.contains(where: name.contains) || name.contains("/") {
            throw ValidationError("--name needs at least one of \(OutputNames.placeholders.joined(separator: ", ")) and no '/'")
        }
        guard [cacheOnly, reload, noCache].filter({ $0 }).count <= 1 else {
            throw ValidationError("--cache-only, --reload and --no-cache exclude each other")
        }
        do { _ = try OutputTransform(resize: resize, format: format, process: process, quality: quality, color: color) } catch { throw ValidationError("\(error)") }
        if retryFailed != nil, !urls.isEmpty || input != nil || inputFormat != nil {
            throw ValidationError("--retry-failed reads its URLs from the earlier run's JSON lines: no URL arguments, --input or --input-format")
        }
        if let retryFailed, let jsonl, URL(fileURLWithPath: retryFailed).standardizedFileURL == URL(fileURLWithPath: jsonl).standardizedFileURL {
            throw ValidationError("--jsonl would empty the file --retry-failed reads: write the new run's lines elsewhere")
        }
        guard !urls.isEmpty || input != nil || retryFailed != nil else { throw ValidationError("no URLs given (pass them as arguments or with --input)") }
        try validateDataset()
    }

    /// The dataset options: formats known, columns only with a columned input, shards only with webdataset.
    private func validateDataset() throws {
        if let inputFormat, InputFormat(rawValue: inputFormat) == nil {
            throw ValidationError("--input-format must be one of \(InputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if !resolvedInputFormat.hasColumns, [urlCol, captionCol, keyCol, saveCols].contains(where: { $0 != nil }) {
            throw ValidationError("--url-col, --caption-col, --key-col and --save-cols need a csv, tsv or jsonl --input")
        }
        let columns = datasetColumns
        guard columns.all.allSatisfy({ !$0.isEmpty }), columns.save.count <= 100 else {
            throw ValidationError("column names must not be empty (and --save-cols names at most 100)")
        }
        if let reserved = columns.save.first(where: DatasetColumns.reservedNames.contains) {
            throw ValidationError("--save-cols: \(reserved) is a field of every sample's JSON already")
        }
        guard ["files", "webdataset"].contains(outputFormat) else { throw ValidationError("--output-format must be files or webdataset") }
        guard (1...10_000_000).contains(shardSize) else { throw ValidationError("--shard-size must be between 1 and 10000000") }
        if outputFormat == "webdataset", skipExisting || name != nil {
            throw ValidationError("--skip-existing and --name write files: not with --output-format webdataset")
        }
    }

    private var resolvedInputFormat: InputFormat {
        inputFormat.flatMap(InputFormat.init(rawValue:)) ?? input.map(InputFormat.of(path:)) ?? .txt
    }

    private var datasetColumns: DatasetColumns {
        DatasetColumns(
            url: urlCol ?? "url", caption: captionCol, key: keyCol,
            save: saveCols.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? [])
    }

    func run() async throws {
        let outputDir = URL(fileURLWithPath: output, isDirectory: true)
        try OutputFile.makeDirectory(outputDir)
        try OutputFile.checkWritable(outputDir)
        if outputFormat == "webdataset" { try WebDatasetWriter.checkNoShards(in: outputDir, prefix: WebDatasetWriter.prefix(shard: shard.flatMap(Shard.init))) }
        // A file size limit (ulimit -f) makes writes fail with EFBIG instead of killing the process.
        signal(SIGXFSZ, SIG_IGN)
        let transform = try OutputTransform(resize: resize, format: format, process: process, quality: quality, color: color)
        let hosts = HostLimiter(limit: perHost, interval: ratePerHost.flatMap(Self.interval(rate:)))
        if ignoreRobots {
            FileHandle.standardError.write(Data("warning: --ignore-robots: robots.txt is not read; URLs it disallows are fetched. Be sure their owners agree.\n".utf8))
        }
        // Polite, the run follows redirects itself and checks each hop's robots.txt before asking.
        let robots: RobotsPolicy? = ignoreRobots || cacheOnly ? nil : RobotsPolicy(
            loader: RedirectFollowingLoader(base: RobotsPolicy.hopLoader), headers: [HTTPField("User-Agent", userAgent ?? CLIUserAgent.default)],
            timeout: try CLIPipeline.downloadTimeout(timeout), agents: CLIUserAgent.robotsAgents(for: userAgent))
        // With --resize the pipeline itself decodes at thumbnail size (JPEG DCT scaling, WebP scaling).
        let pipeline = try CLIPipeline.make(
            cacheDir: cacheDir, concurrency: concurrency, decodingOptions: transform?.decodingOptions ?? .default,
            maxBodyMegabytes: maxBodyMb, cacheSizeMegabytes: cacheSizeMb, cacheMaxAge: cacheMaxAge,
            retries: retries, timeout: timeout, memoryBudgetMegabytes: memoryBudgetMb, userAgent: userAgent, hosts: hosts,
            maxRetryAfter: maxRetryAfter, loader: robots?.checkingRedirects())
        let run = FetchRun(
            pipeline: pipeline, mode: FetchMode(
                transform: transform, verify: verify, options: loadingOptions, honoursOptOut: !ignoreOptOut,
                agents: CLIUserAgent.robotsAgents(for: userAgent)),
            outputDirectory: outputDir, concurrency: concurrency, limiter: hosts, nameTemplate: name,
            skipExisting: skipExisting, jsonl: jsonl, arguments: urls, input: input, shard: shard.flatMap(Shard.init),
            showProgress: !json && isatty(STDOUT_FILENO) == 1, report: report, reportImages: reportImages, inputFormat: resolvedInputFormat,
            columns: datasetColumns,
            dataset: outputFormat == "webdataset" ? WebDatasetWriter(directory: outputDir, shardSize: shardSize, prefix: WebDatasetWriter.prefix(shard: shard.flatMap(Shard.init))) : nil, robots: robots,
            retryFailed: retryFailed, retriesPerLine: retries ?? RetryPolicy().maxRetries)
        // Ctrl-C cancels the run (the summary is still printed, exit 130); a second one exits at once.
        let work = Task { try await run.execute() }
        let interrupt = Interrupt.onSIGINT { work.cancel() }
        defer { interrupt.cancel() }
        let summary = try await work.value
        if json {
            print(try summary.json())
        } else {
            for failure in summary.failures { print("failed: " + TerminalText.safe(failure.text)) }
            if summary.failed > summary.failures.count { print("… and \(summary.failed - summary.failures.count) more failures (see --jsonl)") }
            print(summary.line)
        }
        let status = FetchExit.status(of: summary, maxFailureRate: maxFailureRate.flatMap(FetchExit.rate) ?? 0)
        if status == 1 {
            FileHandle.standardError.write(Data("error: \(summary.unwritten) images or samples could not be written (see the failures)\n".utf8))
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// The time between two requests to one host for `--rate-per-host N` or `N/s`; `nil` when
    /// N is no number from 0.001 to 10000.
    static func interval(rate: String) -> Duration? {
        let number = rate.hasSuffix("/s") ? rate.dropLast(2) : Substring(rate)
        guard let perSecond = Double(number.trimmingCharacters(in: .whitespaces)), perSecond.isFinite, (0.001...10_000).contains(perSecond) else { return nil }
        return .nanoseconds(Int64((1e9 / perSecond).rounded()))
    }

    /// What the cache flags ask of every request.
    private var loadingOptions: ImageLoadingOptions {
        var options: ImageLoadingOptions = []
        if cacheOnly { options.insert(.fromCacheOnly) }
        if reload { options.insert(.fromLoaderOnly) }
        if refresh { options.insert(.refreshCached) }
        if noCache { options.formUnion(.ignoreCaches) }
        return options
    }
}

/// SIGINT handling for commands that finish cleanly when interrupted: the first Ctrl-C calls
/// `handler`, a second one exits at once with status 130.
enum Interrupt {
    static func onSIGINT(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT)
        let count = Counter()
        source.setEventHandler {
            if count.increment() > 1 { exit(130) }
            handler()
        }
        source.resume()
        return source
    }

    /// Counts signals; only touched on the signal source's serial queue.
    private final class Counter: @unchecked Sendable {
        private var value = 0
        func increment() -> Int { value += 1; return value }
    }
}
