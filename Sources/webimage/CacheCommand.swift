import ArgumentParser
import Foundation
import WebImage

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect or clear the disk cache.",
        subcommands: [Stats.self, Clear.self])

    struct Options: ParsableArguments {
        @Option(name: .long, help: "Disk cache directory (default: $XDG_CACHE_HOME/webimage or ~/.cache/webimage).")
        var cacheDir: String?

        @Flag(name: .long, help: "Print JSON.")
        var json = false
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show how many images the disk cache holds and their size.")
        @OptionGroup var options: Options

        func run() async throws {
            let directory = CLIPipeline.cacheDirectory(options.cacheDir)
            let stats = await (try DiskCache(directory: directory)).statistics()
            if options.json {
                print("{\"directory\":\"\(directory.path)\",\"count\":\(stats.count),\"bytes\":\(stats.totalSize)}")
            } else {
                let size = ByteCountFormatter.string(fromByteCount: Int64(stats.totalSize), countStyle: .file)
                print("\(directory.path): \(stats.count) images, \(size)")
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every image from the disk cache.")
        @OptionGroup var options: Options

        func run() async throws {
            let directory = CLIPipeline.cacheDirectory(options.cacheDir)
            let cache = try DiskCache(directory: directory)
            let before = await cache.statistics()
            try await cache.removeAll()
            print("removed \(before.count) images from \(directory.path)")
        }
    }
}
