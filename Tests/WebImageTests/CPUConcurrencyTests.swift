import Foundation
import Testing
@testable import WebImage
import WebImageOrigin

/// Decoding is CPU work and downloading is not: however many downloads run at once, no more
/// decodes run at once than there are cores. The pipeline's stages run on Swift's cooperative
/// pool, which is as wide as the machine has cores; the downloads' sockets are served by the HTTP
/// client's event loops and keep their own concurrency (`fetch --concurrency`,
/// `maxConcurrentDownloads`). A decoder that counts its callers shows both.
@Suite("CPU work is sized to cores")
struct CPUConcurrencyTests {
    /// The JPEG decoder, counting how many decodes run at once.
    final class CountingDecoder: ImageDecoding {
        private let jpeg = JPEGCoder()
        private let counts = Locked((running: 0, peak: 0, total: 0))

        var peak: Int { counts.withLock { $0.peak } }
        var total: Int { counts.withLock { $0.total } }

        func canDecode(_ format: ImageFormat) -> Bool { jpeg.canDecode(format) }
        func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader { try jpeg.readHeader(data) }
        func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
            counts.withLock { $0.running += 1; $0.total += 1; $0.peak = max($0.peak, $0.running) }
            defer { counts.withLock { $0.running -= 1 } }
            return try jpeg.decode(data, options: options)
        }
    }

    @Test func decodesNeverOutnumberTheCoresWhileDownloadsDo() async throws {
        var files: [String: Data] = [:]
        for n in 0..<24 { files["p\(n).jpg"] = try SampleImages.jpeg(width: 1200, height: 900, seed: UInt32(n)) }
        try await withOrigin(files: files) { origin in
            let decoder = CountingDecoder()
            var downloads = ImageDownloaderConfiguration()
            downloads.maxConcurrentDownloads = 16
            downloads.timeout = TestTime.scaled(downloads.timeout)
            let pipeline = ImagePipeline(configuration: .init(
                downloader: ImageDownloader(configuration: downloads), memoryCache: nil, dataCache: nil,
                coders: ImageCoderRegistry(decoders: [decoder], encoders: [])))
            // Each answer waits 200 ms, then its body comes in pieces: downloads overlap with each
            // other (the origin counts a request in flight until its handler answers, hence the
            // wait) and with the decodes of those that finished.
            let urls = (0..<24).map { origin.imageURL("p\($0).jpg", query: "delay=200&chunk=16384&stall=20") }
            let widths = try await withThrowingTaskGroup(of: Int.self) { group in
                for url in urls { group.addTask { try await pipeline.image(for: url).image.pixelWidth } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(widths.count == 24 && widths.allSatisfy { $0 == 1200 })
            #expect(decoder.total == 24)
            let cores = ProcessInfo.processInfo.activeProcessorCount
            #expect(decoder.peak >= 1 && decoder.peak <= cores, "peak \(decoder.peak) decodes at once on \(cores) cores")
            #expect(origin.maxConcurrentRequests > cores, "downloads at once: \(origin.maxConcurrentRequests)")
        }
    }
}
