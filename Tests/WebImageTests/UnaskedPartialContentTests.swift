import Foundation
import Testing
import WebImage
import WebImageOrigin

/// A `206 Partial Content` answers a `Range` request only. An origin that sends one to a request
/// without `Range` sends a slice of the image, which used to be taken (and cached) as the whole
/// (found by a red-team run against `serve`). Now it fails as a bad status, not retried; a
/// caller's own `Range` request still gets its `206`.
@Suite("A 206 nobody asked for is refused")
struct UnaskedPartialContentTests {
    static func slice(_ origin: ImageOrigin) -> URL {
        let header = "Content-Range:bytes 0-99/2365".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return origin.url("/answer/small.jpg?status=206&header=\(header)")
    }

    @Test(arguments: LoaderKind.allCases)
    func anUnaskedPartialAnswerIsABadStatus(loader: LoaderKind) async throws {
        try await withOrigin { origin in
            let downloader = loader.downloader { $0.retryPolicy = RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(10)) }
            await #expect(throws: ImageDownloadError.badStatusCode(206)) { try await downloader.download(Self.slice(origin)) }
            #expect(origin.requests.filter { $0.path == "/answer/small.jpg" }.count == 1, "not retried")
            var ranged = ImageDownloadRequest(url: Self.slice(origin))
            ranged.headers = [HTTPField("Range", "bytes=0-99")]
            let answered = try await downloader.download(ranged)
            #expect(answered.response.statusCode == 206)
        }
    }

    /// Through the pipeline: nothing is cached, and the next load asks again.
    @Test func thePipelineCachesNothingOfIt() async throws {
        try await withOrigin { origin in
            let cache = try DiskCache(directory: temporaryDirectory())
            let pipeline = ImagePipeline(configuration: ImagePipeline.Configuration(memoryCache: nil, dataCache: cache))
            for _ in 0..<2 {
                await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: Self.slice(origin)) }
            }
            #expect(origin.requests.filter { $0.path == "/answer/small.jpg" }.count == 2)
        }
    }
}
