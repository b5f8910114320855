import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// A progressive JPEG is decoded through libjpeg's buffer of every coefficient of the whole
    /// image (width × height × components × 2 bytes), whatever the output size: a red-team
    /// review found a 767 KB 49 MP CMYK file priced at 186 MB for `w=10` while it took 389 MB,
    /// and `/info` price it at a 100-pixel thumbnail. The header now carries that buffer
    /// (`ImageHeader.decoderWorkingBytes`) and every price adds it. Also: `/metrics` shows the
    /// server's own budget, not the library's default one made beside it.
    @Suite("Image server: progressive JPEGs priced at what libjpeg holds")
    struct ServerProgressiveJPEGBudgetTests {
        @Test func theCoefficientBufferIsPricedOnImgAndInfo() async throws {
            let picture = SampleImages.pattern(width: 2400, height: 1800, seed: 5)
            let progressive = try JPEGCoder(progressive: true).encode(picture, as: .jpeg, quality: 0.8)
            let baseline = try JPEGCoder().encode(picture, as: .jpeg, quality: 0.8)
            let header = try ImageCoderRegistry.default.readHeader(progressive)
            #expect(header.decoderWorkingBytes == 2400 * 1800 * 3 * 2)
            #expect(try ImageCoderRegistry.default.readHeader(baseline).decoderWorkingBytes == 0)
            #expect(MemoryBudget.bytes(toDecode: header, options: ImageDecodingOptions(thumbnailMaxPixelSize: 10)) > 2400 * 1800 * 6)
            try await withOrigin(files: ["progressive.jpg": progressive, "baseline.jpg": baseline]) { origin in
                // 24 MB: room for the baseline file's reduced decode, not for the 26 MB of coefficients.
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--memory-budget-mb", "24"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                func source(_ name: String) -> String { ServerHarness.encode(origin.imageURL(name).absoluteString) }
                for path in ["/img?url=\(source("baseline.jpg"))&w=10&format=png", "/info?url=\(source("baseline.jpg"))"] {
                    let (status, body) = try await ServeCommandTests.get(base + path, client: client)
                    #expect(status == 200, "\(path): \(String(decoding: body.prefix(200), as: UTF8.self))")
                }
                for path in ["/img?url=\(source("progressive.jpg"))&w=10&format=png", "/info?url=\(source("progressive.jpg"))"] {
                    let (status, body) = try await ServeCommandTests.get(base + path, client: client)
                    let error = (try? JSONDecoder().decode([String: String].self, from: body))?["error"]
                    #expect([422, 503].contains(status) && ["output_too_large", "over_budget"].contains(error ?? ""),
                            "\(path): \(status) \(String(decoding: body.prefix(200), as: UTF8.self))")
                }
                let metrics = String(decoding: try await ServeCommandTests.get("\(base)/metrics", client: client).1, as: UTF8.self)
                let limit = metrics.split(separator: "\n").first { $0.hasPrefix("webimage_memory_budget_limit_bytes") }
                #expect(limit.map { $0.hasSuffix(" \(24 << 20)") || $0.hasSuffix(" \(24 << 20).0") } == true, "\(limit.map(String.init) ?? "none")")
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
