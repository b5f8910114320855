import Foundation
import WebImage

extension FetchRun {
    /// Loads one line; `acquired`: the line's host slot is taken already (else it is waited for).
    ///
    /// A line whose request got a `429` or `503` with `Retry-After` comes back as
    /// ``Outcome/retry`` while its ``RetryBudget`` has a retry left (shared with the downloader's
    /// retries of other failures: ``retriesPerLine`` in all): the run parks it until its host
    /// is due, so the wait holds none of the `--concurrency` slots (the downloader does not wait
    /// for a `Retry-After` in `fetch`: ``RetryPolicy/leavesRetryAfterToTheCaller``).
    func load(
        _ next: ParkedLoads.Load, names: OutputNames, limiter: HostLimiter?, acquired: Bool, thumbnailSide: Int?, cells: FetchReport.CellCount?
    ) async -> Outcome {
        let (url, entry, sample) = (next.url, next.entry, next.sample)
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
            var download = ImageDownloadRequest(url: url)
            download.retryBudget = next.budget
            let fetched = try await mode.fetch(ImageRequest(download: download, options: mode.options), pipeline: pipeline)
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
            if let thumbnailSide, cells?.hasRoom == true { thumbnail = await FetchReport.thumbnail(of: fetched.data, side: thumbnailSide, budget: pipeline.configuration) }
            result = .success((fetched, name))
        } catch {
            if await isBackOff(error, host: host, limiter: limiter), next.budget.draw() {
                await limiter?.release(host)
                return Outcome(line: entry.line, raw: entry.raw, result: .failure(error), milliseconds: 0, thumbnail: nil, retry: next)
            }
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

    /// Whether `error` is the `429` or `503` whose `Retry-After` backed `host` off (and not a
    /// refusal for the run): the line is to be tried again once the host is due.
    private func isBackOff(_ error: any Error, host: String, limiter: HostLimiter?) async -> Bool {
        guard let limiter, case .loadingFailed(let failure)? = error as? ImagePipelineError else { return false }
        guard failure == .badStatusCode(429) || failure == .badStatusCode(503) else { return false }
        guard await limiter.refusal(of: host) == nil else { return false }
        return await limiter.hasBackedOff(host)
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
    func writeFailed(_ entry: URLSource.Entry, sample: Int?, error: any Error) async -> (key: String?, fields: SampleFields)? {
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
}
