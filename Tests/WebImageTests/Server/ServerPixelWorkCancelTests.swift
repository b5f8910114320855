import Foundation
import Testing
import WebImage

extension ServerTests {
    /// Steps whose unit of work between two looks at the cancel had no bound stop at the deadline
    /// (red team, stop 53): the resampler looked every 16 output rows, so a 49 MP source made one
    /// row high was read whole before the first look, and a pixelation whose block is the image's
    /// height was a single unit. Each kept a core for 2–3 s after its `504` (debug build) and held
    /// its memory reservation, so the next request was `503 over_budget`. Both now look by
    /// pixels done (`CancelCheck`).
    @Suite("Image server: pixel work of any shape stops at the deadline")
    struct ServerPixelWorkCancelTests {
        /// 7000 × 7000 gradients as PNG (no reduced decode): 49 MP decoded whole.
        static let large = Result { () throws -> Data in
            let side = 7_000
            var pixels = [UInt8](repeating: 255, count: side * side * 4)
            for index in 0..<(side * side) {
                pixels[index * 4] = UInt8(truncatingIfNeeded: index % side)
                pixels[index * 4 + 1] = UInt8(truncatingIfNeeded: index / side)
            }
            return try PNGCoder().encode(Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: pixels, isOpaque: true), as: .png, quality: 0.1)
        }

        @Test(arguments: ["h=1&format=png", "pixelate=7000&format=jpeg"])
        func aStepOfOneHugeUnitStopsAtTheDeadline(query: String) async throws {
            let file = try await offPool { try Self.large.get() }
            try await ServerEncodeDeadlineTests.expectAStoppedRender(of: ("large.png", file), query: query, isolated: false)
        }
    }
}
