import ArgumentParser
import Foundation
import WebImage

/// A one-line error for the command line.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum CLIPipeline {
    /// A pipeline with a disk cache in `cacheDir` (or the default directory).
    static func make(
        cacheDir: String?, concurrency: Int = 6, decodingOptions: ImageDecodingOptions = .default,
        maxBodyMegabytes: Int? = nil, cacheSizeMegabytes: Int? = nil,
        cacheMaxAge: Int? = nil, retries: Int? = nil, timeout: Double? = nil, memoryBudgetMegabytes: Int? = nil
    ) throws -> ImagePipeline {
        var downloaderConfiguration = ImageDownloaderConfiguration()
        downloaderConfiguration.maxConcurrentDownloads = concurrency
        if let retries { downloaderConfiguration.retryPolicy.maxRetries = retries }
        if let timeout {
            guard timeout.isFinite, timeout > 0, timeout <= 86_400 else { throw CLIError("the timeout must be from 0 to 86400 seconds") }
            downloaderConfiguration.timeout = .milliseconds(Int64((timeout * 1000).rounded()))
        }
        if let maxBodyMegabytes { downloaderConfiguration.maxBodySize = maxBodyMegabytes << 20 }
        var diskConfiguration = DiskCache.Configuration()
        if let cacheSizeMegabytes { diskConfiguration.sizeLimit = cacheSizeMegabytes << 20 }
        let disk = try DiskCache(directory: cacheDirectory(cacheDir), configuration: diskConfiguration)
        var policy = HTTPCachePolicy()
        if let cacheMaxAge { policy.defaultMaxAge = .seconds(cacheMaxAge) }
        var configuration = ImagePipeline.Configuration(
            downloader: ImageDownloader(configuration: downloaderConfiguration),
            dataCache: disk, decodingOptions: decodingOptions, httpCachePolicy: policy)
        if let memoryBudgetMegabytes {
            guard (1...(1 << 30)).contains(memoryBudgetMegabytes) else { throw CLIError("the memory budget must be 1 MB or more") }
            configuration.memoryBudget = MemoryBudget(limit: memoryBudgetMegabytes << 20)
        }
        return ImagePipeline(configuration: configuration)
    }

    static func cacheDirectory(_ path: String?) -> URL {
        path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DiskCache.defaultDirectory
    }
}

/// The `--input` option: one URL per line from a file, or from standard input for `-`; blank
/// lines and `#` comments are skipped.
enum URLList {
    static func read(_ input: String?) throws -> [String] {
        guard let input else { return [] }
        let text: String
        if input == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            do { text = try String(contentsOfFile: input, encoding: .utf8) } catch {
                throw CLIError("cannot read \(input): \(error.localizedDescription)")
            }
        }
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

extension Duration {
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
