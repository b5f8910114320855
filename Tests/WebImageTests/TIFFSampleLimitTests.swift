import Foundation
import Testing
@testable import WebImage

/// A TIFF page of more than 16 samples a pixel is refused before libtiff reads it (red team, stop
/// 52): libtiff reads a strip of every sample before four are kept, so a 1000 × 1000 page of 390
/// samples (380 KB, deflate) took 412 MB a decode.
@Suite("TIFF: samples a pixel are limited")
struct TIFFSampleLimitTests {
    typealias Bytes = HeavyTests.HeaderWalkCostTests

    /// A 1 × 1 uncompressed 8-bit TIFF of `samples` samples (RGB photometric), all 200.
    static func tiff(samples: Int) -> Data {
        let tags: [(Int, Int, Int, Int)] = [
            (256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 2),
            (273, 4, 1, 8), (277, 3, 1, samples), (278, 3, 1, 1), (279, 4, 1, samples)]
        var bytes = [0x49, 0x49, 0x2A, 0x00] + Bytes.le32(8 + samples) + [UInt8](repeating: 200, count: samples)
        bytes += Bytes.le16(tags.count)
        for (tag, type, count, value) in tags { bytes += Bytes.le16(tag) + Bytes.le16(type) + Bytes.le32(count) + Bytes.le32(value) }
        return Data(bytes + Bytes.le32(0))
    }

    @Test func aPageOfManySamplesIsRefused() throws {
        let rgb = try ImageCoderRegistry.default.decode(Self.tiff(samples: 3))
        #expect(rgb.pixelWidth == 1 && rgb.pixels == [200, 200, 200, 255])
        #expect {
            _ = try ImageCoderRegistry.default.readHeader(Self.tiff(samples: 17))
        } throws: { error in
            guard case ImageDecodingError.corrupt(_, let reason) = error else { return false }
            return reason.contains("17 samples a pixel")
        }
    }
}
