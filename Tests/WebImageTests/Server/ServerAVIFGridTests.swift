import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// An AVIF grid whose 484 tiles declare 64 × 64 but are coded 1400 × 1400 (23 KB; red team,
    /// stop 52; `Fixtures/codecs/avif-grid-oversized-tiles.avif`). libavif 0.11 gives each tile a
    /// dav1d decoder bounded by the whole grid's size, and the grid declares under 2 MP, so the
    /// decode ran in `serve` itself: 3.1 GB there, and 2 s of CPU after its `504`. A grid or
    /// overlay now goes to a decode worker at any size, under the worker's memory limit; since
    /// stop 53 this file is refused before any decode (`ISOCodedItemCheck`), in process too.
    @Suite("Image server: an AVIF grid of oversized tiles")
    struct ServerAVIFGridTests {
        @Test func anAVIFGridOfOversizedTilesStaysOutOfTheServer() async throws {
            let file = try CodecFixtures.data("avif-grid-oversized-tiles.avif")
            try await withOrigin(files: ["grid.avif": file, "small.jpg": SampleFiles.standard["small.jpg"]!]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(["--allow-private-networks"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let pid = serve.process.processIdentifier
                let base = "http://127.0.0.1:\(serve.port)"
                let memoryBefore = try #require(ProcessUsage.peakResidentBytes(pid))
                let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(ServerHarness.encode(origin.imageURL("grid.avif").absoluteString))&w=300", client: .shared)
                // The worker's memory limit ends the decode: a JSON error, not a picture.
                #expect((400..<600).contains(status), "\(status): \(String(decoding: body.prefix(200), as: UTF8.self))")
                let grown = try #require(ProcessUsage.peakResidentBytes(pid)) - memoryBefore
                #expect(grown < 200 << 20, "serve's peak grew by \(grown >> 20) MB")
                let spent = try await ServerDisconnectTests.cpuInTwoSeconds(of: pid)
                #expect(spent < 0.3, "\(spent) s of CPU in the 2 s after the answer")
                let small = ServerHarness.encode(origin.imageURL("small.jpg").absoluteString)
                #expect(try await ServeCommandTests.get("\(base)/img?url=\(small)&w=64", client: .shared).0 == 200)
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }
    }
}
