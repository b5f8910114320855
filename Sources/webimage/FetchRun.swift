import ConsoleKitTerminal
import Foundation
import WebImage

/// One `webimage fetch`: reads the list a line at a time, keeps `concurrency` images loading,
/// and records each outcome (summary, `--jsonl`, the output folder's manifest) as it comes.
///
/// Cancelling the task that runs ``execute()`` (Ctrl-C) stops reading the list and cancels the
/// loads in flight; files are only ever renamed into place complete (``OutputFile``).
struct FetchRun: Sendable {
    var pipeline: ImagePipeline
    var mode: FetchMode
    var outputDirectory: URL
    var concurrency: Int
    /// `--per-host` (the same limiter paces the pipeline's requests: `--rate-per-host`, back-off).
    var limiter: HostLimiter?
    var nameTemplate: String?
    var skipExisting: Bool
    var jsonl: String?
    var arguments: [String]
    var input: String?
    var shard: Shard?
    var showProgress: Bool
    /// `--report FILE`: the HTML contact sheet, of at most `reportImages` images (`--report-images`).
    var report: String?
    var reportImages = FetchReport.defaultCells
    /// `--input-format` and the dataset columns of a CSV, TSV or JSONL list.
    var inputFormat: InputFormat = .txt
    var columns = DatasetColumns()
    /// `--output-format webdataset`: samples go into tar shards instead of files.
    var dataset: WebDatasetWriter?
    /// robots.txt per origin; `nil` with `--ignore-robots` (and `--cache-only`, which asks no server).
    var robots: RobotsPolicy?
    /// `--retry-failed RUN.jsonl`: the input is the failed lines of that earlier run.
    var retryFailed: String?
    /// The retries a line has in all (`--retries`, default 2): the downloader's retries of
    /// transient failures and the run's own, after a host asked for a pause (`429`/`503` with
    /// `Retry-After`: the line is parked, then sent again), draw from one ``RetryBudget``, so a
    /// line is requested at most `1 + retries` times whatever its host answers.
    var retriesPerLine = RetryPolicy().maxRetries

    /// What one loaded (or failed) line came to.
    struct Outcome: Sendable {
        var line: Int
        var raw: String
        var result: Result<(FetchedImage, String), any Error>
        var milliseconds: Double
        /// The report's thumbnail (a data URI), made in the loading task.
        var thumbnail: String?
        /// A webdataset run's failed line: its failed_to_download sample's key and the row's fields
        /// (in the record, for `--retry-failed`).
        var failedSample: (key: String?, fields: SampleFields)? = nil
        /// The line again, to be parked until its host is due: its host asked for a pause
        /// (`Retry-After`). Nothing is recorded for it yet.
        var retry: ParkedLoads.Load? = nil
    }

    func execute() async throws -> FetchSummary {
        // A dataset keeps every row as a sample, repeated URLs too (the caches serve the repeats).
        var source = try URLSource(arguments: arguments, input: input, shard: shard, format: inputFormat, columns: columns, deduplicate: dataset == nil, retryFailed: retryFailed)
        let writer = try jsonl.map { try JSONLinesWriter(path: $0) }
        defer { writer?.close() }
        let manifest = try FetchManifest(directory: outputDirectory, resume: skipExisting)
        defer { manifest.close() }
        // Every name an earlier run recorded is taken (the index), so no URL met earlier in this
        // run is given the name of a file kept for a URL met later; so is every file in the folder.
        let names = OutputNames(folder: FolderNames(directory: outputDirectory, recorded: manifest.index), template: nameTemplate)
        OutputFile.removeStaleTemporaries(in: outputDirectory)
        ManifestIndex.removeStaleIndexes()
        let total = shard == nil && retryFailed == nil ? URLSource.lineCount(input).map { $0 + arguments.count } : nil
        let sheet = report.map { FetchReport(path: $0, cells: reportImages) }
        let thumbnailSide = sheet == nil ? nil : FetchReport.thumbnailSide(expected: total)
        let cells = sheet?.cells
        let progress = showProgress ? Terminal().progressBar(title: "Fetching \(total.map { "\($0) lines of " } ?? "")images") : nil
        progress?.start()
        defer { progress.map { bar in if Task.isCancelled { bar.fail() } else { bar.succeed() } } }

        var summary = FetchSummary()
        let started = ContinuousClock.now
        func note(_ record: FetchRecord, thumbnail: String? = nil) {
            var record = record
            record.at = ((ContinuousClock.now - started).secondsValue * 1000).rounded() / 1000
            summary.record(record)
            sheet?.add(record, thumbnail: thumbnail, at: record.at ?? 0)
            try? writer?.write(record)
            if let total, total > 0 { progress?.activity.currentProgress = Double(summary.lines) / Double(total) }
        }
        // A `nil` outcome is a wake-up: parked loads whose host is due now (`--rate-per-host`,
        // a back-off) start without waiting for another load to end.
        await withTaskGroup(of: Outcome?.self) { group in
            var running = 0
            var wakeAt: ContinuousClock.Instant?
            var samples = 0
            var parked = ParkedLoads(capacity: max(1000, concurrency * 16))
            /// Starts loads until `concurrency` run; lines that need no load are recorded at once.
            func fill() async {
                // Parked loads first: their host may have room now.
                while running < concurrency, !Task.isCancelled, let next = await parked.next(admitting: { await limiter?.tryAcquire($0) ?? true }) {
                    start(next, acquired: true)
                }
                while running < concurrency, !Task.isCancelled, let entry = source.next() {
                    // Every row of a dataset is a sample, numbered in input order (its key and shard).
                    let sample = dataset == nil ? nil : samples
                    samples += 1
                    switch entry.kind {
                    case .invalid(let reason):
                        var record = FetchRecord(line: entry.line, url: entry.raw, status: "invalid", error: reason)
                        if let dataset, let sample {
                            let failed = DatasetSample(number: sample, url: entry.raw, fields: entry.fields, error: reason)
                            do { record.file = try await dataset.write(failed).path } catch {
                                record.error = "\(reason); \(error)"
                                summary.unwritten += 1
                            }
                        }
                        note(record)
                    case .duplicate(let first):
                        let of = first.map { "the URL of line \($0)" } ?? "a URL seen on an earlier line"
                        note(FetchRecord(line: entry.line, url: entry.raw, status: "duplicate", error: "\(of), fetched once"))
                    case .fetch(let url):
                        if skipExisting, let kept = manifest.existing(entry.raw) {
                            note(FetchRecord(line: entry.line, url: entry.raw, status: "skipped", file: kept.file, bytes: kept.bytes))
                            continue
                        }
                        let next = ParkedLoads.Load(url: url, entry: entry, sample: sample, budget: RetryBudget(retries: retriesPerLine))
                        let acquired = await limiter?.tryAcquire(url.host ?? "") ?? true
                        // A load whose host is full waits parked, not in a slot of the run.
                        if !acquired, parked.park(next, host: url.host ?? "") { continue }
                        start(next, acquired: acquired)
                    }
                }
            }
            func start(_ next: ParkedLoads.Load, acquired: Bool) {
                running += 1
                group.addTask {
                    await load(next, names: names, limiter: limiter, acquired: acquired, thumbnailSide: thumbnailSide, cells: cells)
                }
            }
            /// A wake-up when the first parked host is due, unless one comes by then (none if
            /// every parked host only waits for a slot: a load's end wakes those).
            func wakeWhenDue() async {
                guard parked.count > 0, !Task.isCancelled, let due = await limiter?.earliestStart(of: parked.hosts) else { return }
                if let wakeAt, wakeAt <= due { return }
                wakeAt = due
                group.addTask {
                    try? await Task.sleep(until: due, clock: .continuous)
                    return nil
                }
            }
            await fill()
            await wakeWhenDue()
            while true {
                for await outcome in group {
                    if let outcome, let retry = outcome.retry {
                        // Its host asked for a pause (Retry-After): parked until then, in no slot.
                        running -= 1
                        if !parked.park(retry, host: retry.url.host ?? "") { start(retry, acquired: false) }
                    } else if let outcome {
                        running -= 1
                        if case .failure(let error) = outcome.result, error is UnwrittenOutput { summary.unwritten += 1 }
                        note(record(outcome, manifest: manifest), thumbnail: outcome.thumbnail)
                    } else if let due = wakeAt, due <= .now {
                        wakeAt = nil
                    }
                    await fill()
                    await wakeWhenDue()
                }
                // Safety net: nothing runs and no wake-up is timed, yet lines are parked. Every
                // path that parks a line should leave a load whose end, or a wake-up, admits it;
                // if one does not, the run would end without those lines. They start instead as
                // loads that wait for their host inside (as before parking existed).
                guard parked.count > 0, !Task.isCancelled else { break }
                FileHandle.standardError.write(Data("warning: \(parked.count) lines were still waiting for their host; starting them\n".utf8))
                wakeAt = nil
                while running < concurrency, let next = parked.removeAny() { start(next, acquired: false) }
            }
        }
        try await dataset?.finish()
        await pipeline.flushPendingStores()  // the disk cache's writes, before the process ends
        summary.seconds = (ContinuousClock.now - started).secondsValue
        summary.interrupted = Task.isCancelled
        try sheet?.write(summary: summary)
        return summary
    }

    private func record(_ outcome: Outcome, manifest: FetchManifest) -> FetchRecord {
        var record = FetchRecord(line: outcome.line, url: outcome.raw, status: "ok", ms: (outcome.milliseconds * 10).rounded() / 10)
        switch outcome.result {
        case .success(let (fetched, name)):
            if dataset == nil { manifest.record(url: outcome.raw, file: name, bytes: fetched.data.count) }
            record.file = name
            record.format = fetched.format.fileExtension
            record.width = fetched.width
            record.height = fetched.height
            record.bytes = fetched.data.count
            record.source = fetched.sourceName
            record.finalURL = fetched.finalURL?.absoluteString
        case .failure(let error):
            record.status = Self.isCancellation(error) ? "cancelled" : error is OptOut ? "opted-out"
                : Self.cause(of: error) is RobotsDisallowed ? "robots-disallowed" : "failed"
            record.error = "\(error)"
            if record.status == "failed", let (key, fields) = outcome.failedSample {
                record.key = key
                record.caption = fields.caption
                record.columns = fields.saved.isEmpty ? nil : fields.saved
            }
        }
        return record
    }

    /// What the loader threw, out of the pipeline's and downloader's wrapping (a redirect's
    /// robots.txt refusal comes from inside the load).
    static func cause(of error: any Error) -> any Error {
        if case .loadingFailed(.transport(let underlying))? = error as? ImagePipelineError { return underlying }
        return error
    }

    static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? ImagePipelineError) == .cancelled
    }
}

/// A fetched image that could not be written (a full disk, a file size limit): a failed line
/// like others in the records, but `fetch` exits 1 for it whatever `--max-failure-rate` says.
struct UnwrittenOutput: Error, CustomStringConvertible {
    var error: any Error
    var description: String { "\(error)" }
}

extension DatasetSample {
    /// The sample of one fetched image.
    init(_ fetched: FetchedImage, number: Int, entry: URLSource.Entry) {
        self.init(
            number: number, url: entry.raw, fields: entry.fields, image: fetched.data, format: fetched.format.fileExtension,
            width: fetched.width, height: fetched.height)
    }
}
