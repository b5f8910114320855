import Foundation
import Testing
@testable import WebImage

/// A decoded animation's frames are arrays of one canvas each (640 KB here): after glibc has seen
/// such a block freed, it serves them from its heaps and keeps them when they are freed, so a
/// process that had decoded one long animation stayed that much larger, beside the memory budget's
/// count (issue 25: 32 × 200-frame GIFs peaked 100–150 MB over a 256 MB budget). Dropping the image
/// now trims the heap (`ImageStorage`'s deinit). Run in a child process, alone, so that the
/// resident size is this test's.
@Suite("Dropping a decoded animation gives its memory back")
struct AnimationHeapReturnTests {
    /// Resident bytes of this process (`/proc/self/statm`).
    static func resident() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// 120 frames of 400 × 400 (77 MB decoded), decoded and dropped three times: the process
    /// ends up within 30 MB of where it started (2.3 MB of it kept on purpose).
    @Test func aDroppedAnimationLeavesNoResidentFrames() async {
        await #expect(processExitsWith: .success) {
            let side = 400
            let frames = (0..<120).map { index -> ImageFrame in
                let rgba: [UInt8] = index.isMultiple(of: 2) ? [200, 40, 40, 255] : [40, 40, 200, 255]
                return ImageFrame(pixels: [[UInt8]](repeating: rgba, count: side * side).flatMap { $0 }, duration: .milliseconds(50))
            }
            let gif = try GIFCoder().encode(Image(format: .gif, pixelWidth: side, pixelHeight: side, frames: frames, loopCount: 0), as: .gif, quality: 1)
            let before = try Self.resident()
            // Small blocks allocated while each animation is held, and kept (as a process keeps
            // its strings, cache entries and log buffers): they sit above the frames in the heap,
            // so the heap cannot simply shrink from its top when the frames are freed.
            var kept: [[UInt8]] = []
            for round in 0..<3 {
                let image = try GIFCoder().decode(gif, options: .default)
                #expect(image.frameCount == 120)
                kept += (0..<16).map { [UInt8](repeating: UInt8(round), count: (48 << 10) + $0) }
            }
            let after = try Self.resident()
            #expect(kept.count == 48)
            #expect(after - before < 30 << 20, "resident \(before >> 20) MB before, \(after >> 20) MB after")
        }
    }
}
