import Foundation
import WebImage

/// A one-line error for the command line.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum CLIPipeline {
    /// A pipeline with a disk cache in `cacheDir` (or the default directory).
    static func make(cacheDir: String?, concurrency: Int = 6, decodingOptions: ImageDecodingOptions = .default) throws -> ImagePipeline {
        var downloaderConfiguration = ImageDownloaderConfiguration()
        downloaderConfiguration.maxConcurrentDownloads = concurrency
        let disk = try DiskCache(directory: cacheDirectory(cacheDir))
        return ImagePipeline(configuration: .init(
            downloader: ImageDownloader(configuration: downloaderConfiguration),
            dataCache: disk, decodingOptions: decodingOptions))
    }

    static func cacheDirectory(_ path: String?) -> URL {
        path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DiskCache.defaultDirectory
    }
}

extension Duration {
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
