import Foundation
import Testing
@testable import WebImage

/// A JPEG XL's layers count against the pixel limit before any is decoded (red team, stop 52):
/// the header counts only the frames shown, so 1,000 zero-duration layers of 1400 × 1400 (an
/// 88 KB file) decoded as one frame for 28 s of CPU, a 64 × 64 image with a 65536² cropped layer
/// (2.8 KB) took 231 MB, and 256 extra channels (740 bytes) 4 s.
@Suite("JPEG XL: layers count against the pixel limit")
struct JXLLayerLimitTests {
    @Test(arguments: ["jxl-1000-layers.jxl", "jxl-64k-crop-layer.jxl", "jxl-256-extra-channels.jxl"])
    func aFileOfCostlyLayersIsRefusedBeforeDecoding(name: String) async throws {
        let file = try CodecFixtures.data(name)
        #expect(try JXLCoder().readHeader(file).frameCount == 1)
        let (error, spent) = await offPool { () -> (ImageDecodingError?, Duration) in
            let cpu = ThreadCPUClock.current(), start = cpu.used
            do throws(ImageDecodingError) {
                _ = try JXLCoder().decode(file, options: .default)
                return (nil, cpu.used - start)
            } catch {
                return (error, cpu.used - start)
            }
        }
        guard case .tooManyPixels = error else {
            Issue.record("\(name): \(error.map { "\($0)" } ?? "decoded")")
            return
        }
        #expect(spent < TestTime.scaled(.milliseconds(500)), "\(name): refused after \(spent) of CPU")
    }
}
