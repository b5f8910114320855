import ArgumentParser
import Foundation
import WebImage
import WebImageOrigin

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect, check, trim or clear the disk cache.",
        subcommands: [Stats.self, Verify.self, Trim.self, Clear.self, Fill.self])

    struct Options: ParsableArguments {
        @Option(name: .long, help: "Disk cache directory (default: $XDG_CACHE_HOME/webimage or ~/.cache/webimage).")
        var cacheDir: String?

        @Flag(name: .long, help: "Print JSON.")
        var json = false

        var directory: URL { CLIPipeline.cacheDirectory(cacheDir) }

        /// The cache in ``directory``. `existing`: the commands that delete (verify, trim, clear)
        /// refuse a folder that holds files but no index rather than start a cache in it: a
        /// mistyped `--cache-dir` is somebody's folder, not an empty cache (a missing or empty
        /// folder is an empty cache).
        func open(_ configuration: DiskCache.Configuration = .init(), existing: Bool = false) throws -> DiskCache {
            if existing, !FileManager.default.fileExists(atPath: directory.appendingPathComponent("index.sqlite").path),
               let contents = try? FileManager.default.contentsOfDirectory(atPath: directory.path), !contents.isEmpty {
                throw CLIError("\(directory.path) holds files but no disk cache (no index.sqlite); nothing was changed")
            }
            do { return try DiskCache(directory: directory, configuration: configuration) } catch { throw CLIError(error.description) }
        }

        /// `value` as one line of sorted-key JSON with ISO 8601 dates.
        func printJSON(_ value: some Encodable) throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(value), as: UTF8.self))
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, oldest entry and hit counts of the disk cache.")
        @OptionGroup var options: Options

        struct Output: Encodable {
            var directory: String
            var statistics: DiskCache.Statistics
        }

        func run() async throws {
            let stats = try options.open().statistics()
            if options.json { return try options.printJSON(Output(directory: options.directory.path, statistics: stats)) }
            let size = ByteCountFormatter.string(fromByteCount: Int64(stats.totalSize), countStyle: .file)
            let oldest = stats.oldestAccess.map { " oldest access \($0.formatted(.iso8601))," } ?? ""
            print("\(options.directory.path): \(stats.count) images, \(size),\(oldest) \(stats.hits) hits, \(stats.misses) misses, "
                + "\(stats.damaged) damaged, \(stats.evictions) evicted")
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check every entry's checksum; remove damaged entries and orphan files.")
        @OptionGroup var options: Options

        func run() async throws {
            let report = try options.open(existing: true).verify()
            if options.json { return try options.printJSON(report) }
            print("checked \(report.checked) entries: \(report.damaged.count) damaged, \(report.missing.count) missing files, "
                + "\(report.orphansRemoved) orphan files removed")
            for key in report.damaged { print("damaged: \(key)") }
            for key in report.missing { print("missing: \(key)") }
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply the size and age limits now.")
        @OptionGroup var options: Options
        @Option(name: .long, help: "Size limit in MB (default 500).")
        var cacheSizeMb: Double?
        @Option(name: .long, help: "Age limit in seconds since last access (default 7 days).")
        var cacheMaxAge: Int?

        func run() async throws {
            var configuration = DiskCache.Configuration()
            if let cacheSizeMb { configuration.sizeLimit = Int(cacheSizeMb * 1_000_000) }
            if let cacheMaxAge { configuration.maxAge = .seconds(cacheMaxAge) }
            let cache = try options.open(configuration, existing: true)
            let report = try cache.trim()
            let stats = try cache.statistics()
            if options.json { return try options.printJSON(["expired": report.expired, "evicted": report.evicted,
                                                           "orphansRemoved": report.orphansRemoved, "count": stats.count, "bytes": stats.totalSize]) }
            print("removed \(report.expired) expired and \(report.evicted) least recently used entries, \(report.orphansRemoved) orphan files; "
                + "\(stats.count) entries, \(stats.totalSize) bytes left")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every image from the disk cache.")
        @OptionGroup var options: Options

        func run() async throws {
            let cache = try options.open(existing: true)
            let before = try cache.statistics()
            try cache.removeAll()
            if options.json { return try options.printJSON(["removed": before.count]) }
            print("removed \(before.count) images from \(options.directory.path)")
        }
    }

    /// Stores generated entries (``CacheSamples``): what the crash and multi-process tests run.
    struct Fill: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store generated entries (for tests).", shouldDisplay: false)
        @OptionGroup var options: Options
        @Option(name: .long) var count = 100
        @Option(name: .long, help: "Keys are <prefix><i>.") var prefix = "k"
        @Option(name: .long, help: "Version mixed into the bytes, so a rewrite of a key changes them.") var version = 0
        @Option(name: .long) var cacheSizeMb: Double?
        @Flag(name: .long) var noFsync = false
        @Option(name: .long, help: "Entries of this many KiB each (default: 1–64 KiB).") var entryKib: Int?

        func run() async throws {
            var configuration = DiskCache.Configuration(synchronousWrites: !noFsync)
            if let cacheSizeMb { configuration.sizeLimit = Int(cacheSizeMb * 1_000_000) }
            let cache = try options.open(configuration)
            for i in 0..<count {
                let key = "\(prefix)\(i)"
                let data = CacheSamples.bytes(for: key, version: version, size: entryKib.map { min(max($0, 1), 1 << 20) * 1024 })
                do { try cache.store(data, metadata: CacheMetadata(url: key, byteCount: data.count), for: key) } catch {
                    throw CLIError(error.description)
                }
                print("stored \(key)")
            }
        }
    }
}
