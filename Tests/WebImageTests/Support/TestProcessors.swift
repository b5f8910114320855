import Foundation
import WebImage

/// A real processor for pipeline tests: keeps the left `fraction` of the image (so variants
/// differ in size and their results are easy to tell apart).
struct KeepLeft: ImageProcessing, Hashable {
    var fraction: Double
    var identifier: String { "test.keep-left(\(fraction))" }

    func process(_ image: Image) throws(ImageProcessingError) -> Image {
        let width = max(1, Int(Double(image.pixelWidth) * fraction))
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * image.pixelHeight * 4)
        for row in 0..<image.pixelHeight {
            let start = row * image.bytesPerRow
            pixels += image.pixels[start..<(start + width * 4)]
        }
        return Image(format: image.format, pixelWidth: width, pixelHeight: image.pixelHeight, pixels: pixels, isOpaque: image.isOpaque, scale: image.scale)
    }
}

/// A processor that always fails, for error paths.
struct Refuse: ImageProcessing {
    var identifier: String { "test.refuse" }
    func process(_ image: Image) throws(ImageProcessingError) -> Image {
        throw .invalidParameter(processor: identifier, reason: "refuses every image")
    }
}

/// A pipeline with its own downloader (no retries) and, optionally, a disk cache.
func makeTestPipeline(
    cacheDirectory: URL?, memory: MemoryCache? = MemoryCache(), failedURLTimeToLive: Duration? = nil,
    downloader change: (inout ImageDownloaderConfiguration) -> Void = { _ in }
) throws -> ImagePipeline {
    var configuration = ImageDownloaderConfiguration()
    configuration.retryPolicy = .none
    // 300 s, not the library's 15 s: the timeout counts from sending to the last body byte as
    // the pipeline's tasks see it, and in a full run the pool's two threads are sometimes held by
    // other tests' work for minutes (stop 47's CI log: dozens of tests of a few milliseconds each
    // "passed after 185 s"; this file's data-for-request test once timed out at 120 s). Tests
    // of timeouts set their own.
    configuration.timeout = TestTime.scaled(.seconds(300))
    change(&configuration)
    return ImagePipeline(configuration: .init(
        downloader: ImageDownloader(configuration: configuration), memoryCache: memory,
        dataCache: try cacheDirectory.map { try DiskCache(directory: $0) }, failedURLTimeToLive: failedURLTimeToLive))
}
