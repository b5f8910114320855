import Foundation
import Testing
import WebImage

extension ServerTests {
    /// A scaled watermark costs what the result's size costs, not what the mark's does (red team,
    /// stop 53): `wm=…:SCALE` resized the whole mark for every request, so a 4096 × 4096 mark over
    /// a 1 × 1 result read 16.7 MP each time (3 s of CPU in a debug build, past the deadline too).
    /// The mark's halvings are made once at startup and the smallest that covers the size asked
    /// is resized.
    @Suite("Image server: a scaled watermark costs the result's size")
    struct ServerWatermarkCostTests {
        @Test func aLargeMarkScaledForATinyResultIsCheap() async throws {
            let markFile = temporaryDirectory().appendingPathComponent("mark.png")
            try await HostileImages.gradient(side: 4096).write(to: markFile)
            let dot = RawPNG(width: 1, height: 1, colorType: 2) { _, _ in [10, 20, 30] }.encode()
            try await withOrigin(files: ["dot.png": dot]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--watermark", markFile.path], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let pid = serve.process.processIdentifier, base = "http://127.0.0.1:\(serve.port)"
                let source = ServerHarness.encode(origin.imageURL("dot.png").absoluteString)
                let before = try #require(ProcessUsage.cpuSeconds(pid))
                // Four different results (offsets), so none is a cache hit.
                for offset in 0..<4 {
                    let (status, body) = try await ServeCommandTests.get("\(base)/img?url=\(source)&format=png&wm=1:ce:\(offset):0:0.000001", client: .shared)
                    #expect(status == 200, "\(String(decoding: body.prefix(200), as: UTF8.self))")
                }
                let spent = try #require(ProcessUsage.cpuSeconds(pid)) - before
                #expect(spent < 1.0 * Double(TestTime.scale), "four 1 × 1 results with a scaled 4096² mark took \(spent) s of CPU")
                kill(pid, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }
    }
}
