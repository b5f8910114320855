import ArgumentParser
import Foundation
import WebImage

/// A one-line error for the command line.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    /// Messages quote what a stranger chose (a list line, a URL): made safe for a terminal.
    init(_ description: String) { self.description = TerminalText.safe(description) }
}

enum CLIPipeline {
    /// A pipeline with a disk cache in `cacheDir` (or the default directory).
    static func make(
        cacheDir: String?, concurrency: Int = 6, decodingOptions: ImageDecodingOptions = .default,
        maxBodyMegabytes: Int? = nil, cacheSizeMegabytes: Int? = nil,
        cacheMaxAge: Int? = nil, retries: Int? = nil, timeout: Double? = nil, memoryBudgetMegabytes: Int? = nil,
        userAgent: String? = nil, hosts: HostLimiter? = nil, maxRetryAfter: Double? = nil, loader: (any DataLoading)? = nil
    ) throws -> ImagePipeline {
        var downloaderConfiguration = ImageDownloaderConfiguration()
        downloaderConfiguration.headers = downloaderConfiguration.headers.filter { $0.name.lowercased() != "user-agent" }
            + [HTTPField("User-Agent", userAgent ?? CLIUserAgent.default)]
        downloaderConfiguration.maxConcurrentDownloads = concurrency
        if let retries { downloaderConfiguration.retryPolicy.maxRetries = retries }
        if let maxRetryAfter {
            // `fetch`: a longer Retry-After ends the retries, and the host is refused (pace below).
            downloaderConfiguration.retryPolicy.maxRetryAfter = .milliseconds(Int64((maxRetryAfter * 1000).rounded()))
            downloaderConfiguration.retryPolicy.givesUpPastMaxRetryAfter = true
        }
        downloaderConfiguration.timeout = try downloadTimeout(timeout)
        if let maxBodyMegabytes { downloaderConfiguration.maxBodySize = maxBodyMegabytes << 20 }
        if let hosts { pace(&downloaderConfiguration, by: hosts) }
        var diskConfiguration = DiskCache.Configuration()
        if let cacheSizeMegabytes { diskConfiguration.sizeLimit = cacheSizeMegabytes << 20 }
        let disk = try DiskCache(directory: cacheDirectory(cacheDir), configuration: diskConfiguration)
        var policy = HTTPCachePolicy()
        if let cacheMaxAge { policy.defaultMaxAge = .seconds(cacheMaxAge) }
        var configuration = ImagePipeline.Configuration(
            downloader: ImageDownloader(loader: loader ?? HTTPDataLoader(), configuration: downloaderConfiguration),
            dataCache: disk, decodingOptions: decodingOptions, httpCachePolicy: policy)
        if let memoryBudgetMegabytes {
            guard (1...(1 << 30)).contains(memoryBudgetMegabytes) else { throw CLIError("the memory budget must be 1 MB or more") }
            configuration.memoryBudget = MemoryBudget(limit: memoryBudgetMegabytes << 20)
        }
        return ImagePipeline(configuration: configuration)
    }

    /// Every request (retries too) waits for its host's turn (`--rate-per-host`, back-off), and a
    /// `429` or `503` with `Retry-After` backs the whole host off for that long — up to the retry
    /// policy's ``RetryPolicy/maxRetryAfter``; past it, with ``RetryPolicy/givesUpPastMaxRetryAfter``
    /// (`fetch --max-retry-after`), the host is refused for the rest of the run (its requests
    /// are not sent: the modifier returns `nil`), else the wait is capped there.
    private static func pace(_ configuration: inout ImageDownloaderConfiguration, by hosts: HostLimiter) {
        // A Retry-After is waited for by the caller, parked (`FetchRun`), not by a sleeping retry.
        configuration.retryPolicy.leavesRetryAfterToTheCaller = true
        let policy = configuration.retryPolicy
        configuration.requestModifier = { request in
            try await hosts.pace(request.url.host ?? "") ? request : nil
        }
        configuration.responseModifier = { response in
            if response.statusCode == 429 || response.statusCode == 503, let value = response.value(forHeader: "Retry-After"),
               let seconds = HTTPHeaderValue.retryAfterSeconds(value) {
                let host = response.url.host ?? ""
                if policy.givesUpPastMaxRetryAfter, seconds > policy.maxRetryAfter.secondsValue {
                    await hosts.refuse(HostRefusal(host: host, asked: seconds, limit: policy.maxRetryAfter.secondsValue))
                } else if let delay = HTTPHeaderValue.retryAfterDelay(value, limit: policy.maxRetryAfter) {
                    await hosts.backOff(host, for: delay)
                }
            }
            return response
        }
    }

    /// `--timeout` in seconds, or the downloader's default.
    static func downloadTimeout(_ seconds: Double?) throws -> Duration {
        guard let seconds else { return ImageDownloaderConfiguration().timeout }
        guard seconds.isFinite, seconds > 0, seconds <= 86_400 else { throw CLIError("the timeout must be from 0 to 86400 seconds") }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    static func cacheDirectory(_ path: String?) -> URL {
        path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DiskCache.defaultDirectory
    }
}

/// The `--input` option of `show` and `prefetch`: one URL per line from a file, or from standard
/// input for `-`; blank lines and `#` comments are skipped. Read line by line (``LineReader``):
/// a line over 64 KB is refused without being held, and so is a list over `maxEntries` URLs
/// (these commands keep the list; `fetch` streams any length). Before, the whole input was read
/// first: an 800 MB line took 1.6 GB, and `/dev/zero` all memory.
enum URLList {
    static func read(_ input: String?, maxEntries: Int = 1_000_000) throws -> [String] {
        guard let input else { return [] }
        let handle: FileHandle
        if input == "-" {
            handle = .standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: input) else { throw CLIError("cannot read \(input)") }
            handle = file
        }
        let reader = LineReader(handle: handle)
        var entries: [String] = []
        var number = 0
        while let line = reader.next() {
            number += 1
            guard case .text(let text) = line else {
                throw CLIError("\(input): line \(number) is longer than \(LineReader.maxLineLength / 1024) KB")
            }
            let entry = text.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty, !entry.hasPrefix("#") else { continue }
            guard entries.count < maxEntries else {
                throw CLIError("\(input): more than \(maxEntries) URLs; use fetch --input, which reads a list of any length as it goes")
            }
            entries.append(entry)
        }
        return entries
    }
}

extension Duration {
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
