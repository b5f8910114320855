import ArgumentParser
import Foundation
import WebImage
import WebImageOrigin

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve sample images from a local origin and load them through the pipeline: cold, warm, then from disk.")

    @Option(name: .long, help: "Where the fetched images are written (default: a new temporary directory).")
    var output: String?

    func run() async throws {
        let files = try SampleImages.standardSet()
        let origin = try await ImageOrigin.start(files: files)
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("webimage-demo-\(UUID().uuidString.prefix(8))")
        let outputDir = output.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? work.appendingPathComponent("images")
        let cacheDir = work.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: outputDir, withIntermediateDirectories: true)
        let urls = origin.imageNames.map { origin.imageURL($0) }
        print("origin: \(origin.baseURL) serving \(urls.count) images (\(files.values.reduce(0) { $0 + $1.count }) bytes)")

        let pipeline = ImagePipeline(configuration: .init(dataCache: try DiskCache(directory: cacheDir)))
        var rows: [Row] = []
        rows.append(try await pass("cold", pipeline, urls, writeTo: outputDir))
        rows.append(try await pass("warm", pipeline, urls, writeTo: nil))
        await pipeline.flushPendingStores()  // the disk writes the loads did not wait for
        let fresh = ImagePipeline(configuration: .init(dataCache: try DiskCache(directory: cacheDir)))
        rows.append(try await pass("new pipeline", fresh, urls, writeTo: nil))
        await origin.stop()

        print("")
        print("pass           images  memory  disk  network   time ms   images/s")
        for row in rows {
            print(
                row.name.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + String(format: " %6d  %6d  %4d  %7d  %8.1f  %9.0f", row.count, row.memory, row.disk, row.network, row.ms, Double(row.count) / (row.ms / 1000)))
        }
        print("")
        print("origin requests: \(origin.totalRequests) (one per image: only the cold pass used the network)")
        print("images written to \(outputDir.path)")
        print("disk cache at \(cacheDir.path)")
    }

    struct Row {
        var name: String
        var count = 0, memory = 0, disk = 0, network = 0
        var ms = 0.0
    }

    private func pass(_ name: String, _ pipeline: ImagePipeline, _ urls: [URL], writeTo dir: URL?) async throws -> Row {
        var row = Row(name: name)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: ImageResponse.self) { group in
            for url in urls { group.addTask { try await pipeline.image(for: url) } }
            for try await response in group {
                row.count += 1
                switch response.source {
                case .memory: row.memory += 1
                case .disk: row.disk += 1
                case .network: row.network += 1
                }
                if let dir, let data = response.data {
                    try data.write(to: dir.appendingPathComponent(response.request.url.lastPathComponent))
                }
            }
        }
        row.ms = (ContinuousClock.now - start).secondsValue * 1000
        return row
    }
}
