import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

/// A source whose header takes seconds to walk does not stall the server (red team, stop 49): a
/// 14 MB GIF of 600,000 one-pixel frames held a cooperative thread for 27 s while its header was
/// read, and `/health` did not answer for 25 s. Headers are now read on the render threads.
extension HeavyTests {
    @Suite("Image server: a slow header leaves /health its threads")
    struct ServerHeaderWalkTests {
        /// A 1 × 1 GIF of `frames` frames (23 bytes each).
        static func manyFrames(_ frames: Int) -> Data {
            var bytes: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
            let frame: [UInt8] = [0x21, 0xF9, 4, 0, 1, 0, 0, 0] + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0] + [2, 2, 0x4C, 0x01, 0]
            bytes.reserveCapacity(bytes.count + frames * frame.count + 1)
            for _ in 0..<frames { bytes += frame }
            return Data(bytes + [0x3B])
        }

        @Test func healthAnswersWhileAHeaderIsWalked() async throws {
            let gif = Self.manyFrames(100_000)
            #expect(try ImageCoderRegistry.default.readHeader(gif).frameCount == 100_000)
            try await withImageServer(files: ["many.gif": gif], { $0.renderThreads = 1 }) { harness in
                let slow = Task { try await harness.image("many.gif", [("w", "1")]) }
                // The origin has answered: the header walk (seconds in a debug build) is under way.
                #expect(await eventually { harness.origin.requestCount(path: "/images/many.gif") == 1 })
                try await Task.sleep(for: .milliseconds(300))
                for _ in 0..<3 {
                    let clock = ContinuousClock(), start = clock.now
                    let health = try await harness.get("/health")
                    #expect(health.status == 200)
                    #expect(clock.now - start < .seconds(1), "/health took \(clock.now - start)")
                }
                _ = try await slow.value
            }
        }
    }
}
