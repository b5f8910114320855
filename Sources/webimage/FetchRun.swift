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
    /// `--report FILE`: the HTML contact sheet.
    var report: String?
    /// `--input-format` and the dataset columns of a CSV, TSV or JSONL list.
    var inputFormat: InputFormat = .txt
    var columns = DatasetColumns()
    /// `--output-format webdataset`: samples go into tar shards instead of files.
    var dataset: WebDatasetWriter?
    /// robots.txt per origin; `nil` with `--ignore-robots` (and `--cache-only`, which asks no server).
    var robots: RobotsPolicy?
    /// `--retry-failed RUN.jsonl`: the input is the failed lines of that earlier run.
    var retryFailed: String?

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
        let total = shard == nil && retryFailed == nil ? URLSource.lineCount(input).map { $0 + arguments.count } : nil
        let sheet = report.map { FetchReport(path: $0) }
        let thumbnailSide = sheet == nil ? nil : FetchReport.thumbnailSide(expected: total)
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
                        let next = ParkedLoads.Load(url: url, entry: entry, sample: sample)
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
                    await load(next.url, entry: next.entry, sample: next.sample, names: names, limiter: limiter, acquired: acquired, thumbnailSide: thumbnailSide)
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
                    if let outcome {
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

    /// Loads one line; `acquired`: the line's host slot is taken already (else it is waited for).
    private func load(_ url: URL, entry: URLSource.Entry, sample: Int?, names: OutputNames, limiter: HostLimiter?, acquired: Bool, thumbnailSide: Int?) async -> Outcome {
        let host = url.host ?? ""
        // Before the caches too: a disallowed URL is not written from an earlier run's copy either;
        // nor is a refused host's (its robots.txt is not asked for either).
        do {
            if let refusal = await limiter?.refusal(of: host) { throw refusal.explaining(nil) }
            try await robots?.check(url)
        } catch {
            if acquired { await limiter?.release(host) }
            return Outcome(line: entry.line, raw: entry.raw, result: .failure(error), milliseconds: 0, thumbnail: nil,
                           failedSample: await writeFailed(entry, sample: sample, error: error))
        }
        if !acquired { await limiter?.acquire(host) }
        let started = ContinuousClock.now
        let result: Result<(FetchedImage, String), any Error>
        var thumbnail: String?
        var failedSample: (key: String?, fields: SampleFields)?
        do {
            let fetched = try await mode.fetch(ImageRequest(url: url, options: mode.options), pipeline: pipeline)
            try Task.checkCancellation()
            let name: String
            do {
                if let dataset, let sample {
                    name = try await dataset.write(DatasetSample(fetched, number: sample, entry: entry)).path
                } else {
                    name = try await place(fetched, line: entry.line, names: names)
                }
            } catch {
                // A write stopped by Ctrl-C is a cancelled line, not an output error.
                throw Self.isCancellation(error) ? error : UnwrittenOutput(error: error)
            }
            if let thumbnailSide { thumbnail = FetchReport.thumbnail(of: fetched.data, side: thumbnailSide) }
            result = .success((fetched, name))
        } catch {
            let failure = await explained(error, host: host)
            result = .failure(failure)
            // A failed download is still a sample (its JSON says why), as in img2dataset; an
            // interrupted one is not.
            if !Self.isCancellation(error) { failedSample = await writeFailed(entry, sample: sample, error: failure) }
        }
        await limiter?.release(host)
        return Outcome(
            line: entry.line, raw: entry.raw, result: result,
            milliseconds: (ContinuousClock.now - started).secondsValue * 1000, thumbnail: thumbnail, failedSample: failedSample)
    }

    /// A line's failure, with the reason when its host was refused for the run (`--max-retry-after`):
    /// its request was not sent, or it was the 429 or 503 that asked for too long a wait.
    private func explained(_ error: any Error, host: String) async -> any Error {
        guard case .loadingFailed(let failure)? = error as? ImagePipelineError, let refusal = await limiter?.refusal(of: host) else { return error }
        switch failure {
        case .requestRefused: return refusal.explaining(nil)
        case .badStatusCode(429), .badStatusCode(503): return refusal.explaining(error)
        default: return error
        }
    }

    /// A webdataset run's failed line is still a sample (its JSON says why), as in img2dataset:
    /// its key (`nil` if it could not be written) and fields, for the line's record.
    private func writeFailed(_ entry: URLSource.Entry, sample: Int?, error: any Error) async -> (key: String?, fields: SampleFields)? {
        guard let dataset, let sample else { return nil }
        let placed = try? await dataset.write(DatasetSample(number: sample, url: entry.raw, fields: entry.fields, error: "\(error)"))
        return (placed?.key, entry.fields)
    }

    /// Writes `fetched` under its name, or — when a file has that name (another process's, or
    /// one that came after the name was chosen) — the next suffixed one: a file is never replaced.
    /// Each name is released once tried: its file is in place, another file has it, or the
    /// write failed — the folder answers for it from then on.
    private func place(_ fetched: FetchedImage, line: Int, names: OutputNames) async throws -> String {
        var staged: String?
        var name = ""
        for _ in 0..<1000 {
            name = await names.name(for: fetched.nameURL, format: fetched.format, index: line)
            let placed = Result(catching: { () throws -> Bool in
                let file = try staged ?? OutputFile.stage(fetched.data, in: outputDirectory, name: name)
                staged = file
                return try OutputFile.place(file, in: outputDirectory, as: name)
            })
            await names.release(name)
            if try placed.get() { return name }
        }
        if let staged { OutputFile.discard(staged) }
        throw CLIError("cannot write \(name): a thousand names in a row are taken")
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
            record.status = Self.isCancellation(error) ? "cancelled" : error is OptOut ? "opted-out" : error is RobotsDisallowed ? "robots-disallowed" : "failed"
            record.error = "\(error)"
            if record.status == "failed", let (key, fields) = outcome.failedSample {
                record.key = key
                record.caption = fields.caption
                record.columns = fields.saved.isEmpty ? nil : fields.saved
            }
        }
        return record
    }

    private static func isCancellation(_ error: any Error) -> Bool {
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
