import ArgumentParser
import ConsoleKitTerminal
import Foundation
import WebImage

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images through the pipeline and write their original bytes to a directory.")

    @Argument(help: "Image URLs.")
    var urls: [String] = []

    @Option(name: .long, help: "A file with one URL per line ('-' reads standard input).")
    var input: String?

    @Option(name: .long, help: "Directory the images are written to.")
    var output: String

    @Option(name: .long, help: "Images loaded at once.")
    var concurrency: Int = 6

    @Option(name: .long, help: "Disk cache directory (default: $XDG_CACHE_HOME/webimage or ~/.cache/webimage).")
    var cacheDir: String?

    @Option(name: .long, help: "HTTP client: asynchttpclient (default) or urlsession.")
    var loader: LoaderChoice = .asyncHTTPClient

    @Option(name: .long, help: "Refuse bodies larger than this many megabytes (default 50).")
    var maxBodyMb: Int?

    @Flag(name: .long, help: "Print the summary as one JSON object.")
    var json = false

    @Option(name: .long, help: "Write thumbnails that fit inside WIDTHxHEIGHT (aspect kept, never enlarged).")
    var resize: String?

    @Option(name: .long, help: "Re-encode as jpeg, png, webp, gif, avif or apng (the file extension follows).")
    var format: String?

    @Option(name: .long, help: "Process each image, e.g. resize:256x256:fill,round:12,blur:2 (also grayscale, rotate:90, crop:X,Y,W,H, crop:square, circle, flip:h, tint:RRGGBBAA).")
    var process: String?

    @Flag(name: .long, help: "Decode every image fully and fail the undecodable ones (otherwise only the header is read).")
    var verify = false

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

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
        guard cacheSizeMb.map({ $0 > 0 }) ?? true else { throw ValidationError("--cache-size-mb must be at least 1") }
        guard cacheMaxAge.map({ $0 >= 0 }) ?? true else { throw ValidationError("--cache-max-age must not be negative") }
        guard [cacheOnly, reload, noCache].filter({ $0 }).count <= 1 else {
            throw ValidationError("--cache-only, --reload and --no-cache exclude each other")
        }
        do { _ = try OutputTransform(resize: resize, format: format, process: process) } catch { throw ValidationError("\(error)") }
    }

    func run() async throws {
        let list = try urls + readInput()
        guard !list.isEmpty else { throw ValidationError("no URLs given (pass them as arguments or with --input)") }
        let outputDir = URL(fileURLWithPath: output, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: outputDir, withIntermediateDirectories: true)
        } catch {
            throw CLIError("cannot create the output directory \(outputDir.path): \(error.localizedDescription)")
        }
        let transform = try OutputTransform(resize: resize, format: format, process: process)
        // With --resize the pipeline itself decodes at thumbnail size (JPEG DCT scaling, WebP scaling).
        let pipeline = try CLIPipeline.make(
            cacheDir: cacheDir, concurrency: concurrency, decodingOptions: transform?.decodingOptions ?? .default,
            loader: loader, maxBodyMegabytes: maxBodyMb, cacheSizeMegabytes: cacheSizeMb, cacheMaxAge: cacheMaxAge)
        let mode = FetchMode(transform: transform, verify: verify, options: loadingOptions)
        let showProgress = !json && isatty(STDOUT_FILENO) == 1
        let progress = showProgress ? Terminal().progressBar(title: "Fetching \(list.count) images") : nil
        progress?.start()

        let started = ContinuousClock.now
        var summary = FetchSummary()
        summary.requested = list.count
        let names = OutputNames()
        await withTaskGroup(of: (String, Result<FetchedImage, any Error>).self) { group in
            var next = 0
            func add() {
                let raw = list[next]
                next += 1
                group.addTask { (raw, await Self.fetchOne(raw, pipeline: pipeline, into: outputDir, names: names, mode: mode)) }
            }
            while next < min(concurrency, list.count) { add() }
            var done = 0
            for await (raw, result) in group {
                switch result {
                case .success(let fetched): summary.record(fetched)
                case .failure(let error): summary.record(failure: raw, "\(error)")
                }
                done += 1
                progress?.activity.currentProgress = Double(done) / Double(list.count)
                if next < list.count { add() }
            }
        }
        await pipeline.flushPendingStores()  // the disk cache's writes, before the process ends
        summary.seconds = (ContinuousClock.now - started).secondsValue
        if summary.failed == 0 { progress?.succeed() } else { progress?.fail() }
        if json {
            print(try summary.json())
        } else {
            for failure in summary.failures { print("failed: \(failure.url): \(failure.error)") }
            print(summary.line)
        }
        if summary.failed > 0 { throw ExitCode(1) }
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

    private static func fetchOne(
        _ raw: String, pipeline: ImagePipeline, into dir: URL, names: OutputNames, mode: FetchMode
    ) async -> Result<FetchedImage, any Error> {
        do {
            guard let url = URL(string: raw.trimmingCharacters(in: .whitespaces)), url.scheme != nil else {
                throw CLIError("invalid URL")
            }
            let fetched = try await mode.fetch(ImageRequest(url: url, options: mode.options), pipeline: pipeline)
            let name = await names.name(for: fetched.nameURL, format: fetched.format)
            try fetched.data.write(to: dir.appendingPathComponent(name), options: .atomic)
            return .success(fetched)
        } catch {
            return .failure(error)
        }
    }

    private func readInput() throws -> [String] { try URLList.read(input) }
}
