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
    // 120 s, not the library's 15 s: when a full run starts, its hundreds of tests keep the
    // pool's two threads busy for up to a minute, and a download that started then timed out.
    // Tests of timeouts set their own.
    configuration.timeout = TestTime.scaled(.seconds(120))
    change(&configuration)
    return ImagePipeline(configuration: .init(
        downloader: ImageDownloader(configuration: configuration), memoryCache: memory,
        dataCache: try cacheDirectory.map { try DiskCache(directory: $0) }, failedURLTimeToLive: failedURLTimeToLive))
}
