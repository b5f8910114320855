import Foundation
import Testing
@testable import WebImage

extension HeavyTests.HeaderWalkCostTests {
    /// A header read keeps nothing per frame, nor a copy of the file: `webimage info`'s peak
    /// memory is the file and the process. Measured before (a debug build): 360 MB
    /// for a 46 MB GIF of two million frames (giflib kept a record of every frame until the file
    /// closed, and the walk three arrays of them), 209 MB for a 40 MB APNG of 600,000 (every
    /// chunk and frame kept, each frame with an array of its own). Then 125 MB and 75 MB; the GIF's
    /// 125 MB was the file and the copy made for giflib, now borrowed (`PinnedBytes.borrowing`): 79 MB.
    @Test(arguments: ["gif", "apng"])
    func aHeaderReadKeepsNothingPerFrame(format: String) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is missing: run ./scripts/setup")
        let file = format == "gif" ? Self.manyFrameGIF(2_000_000) : Self.manyFrameAPNG(600_000)
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("frames.\(format)").path
        #expect(FileManager.default.createFile(atPath: path, contents: file))
        let run = try await BombMemoryTests.peakMemory(["info", path])
        #expect(run.status == 0 && run.output.contains(format == "gif" ? "2000000 frames" : "600000 frames"), "\(run.output)")
        #expect(run.bytes < file.count + 60 << 20, "peak \(run.bytes >> 20) MB for a \(file.count >> 20) MB file")
    }
}
