import Foundation
import Testing
@testable import WebImage

/// AVIF and HEIF files whose container says a smaller size (`ispe`) than the coded frames inside
/// (red team, stop 49: a 10 KB AVIF saying 1000 × 750 held a 12000 × 12000 frame and took 305 MB
/// to "decode cleanly"; a 98 KB HEIF of the same kind took 1 GB in `serve`). Every price and
/// limit is computed from the container's size, so the frames must not be larger.
extension HeavyTests {
    @Suite("Containers that understate their frames")
    struct ContainerSizeLieTests {
        /// `data` with every `ispe` box's width and height set to `width` × `height`.
        static func lying(_ data: Data, width: UInt32, height: UInt32) -> Data {
            var bytes = [UInt8](data)
            let tag = Array("ispe".utf8)
            var i = 0
            while i + 16 <= bytes.count {
                if Array(bytes[i..<i + 4]) == tag {
                    // 'ispe', version and flags (4 bytes), width, height (big-endian).
                    for (offset, value) in [(8, width), (12, height)] {
                        withUnsafeBytes(of: value.bigEndian) { for (k, byte) in $0.enumerated() { bytes[i + offset + k] = byte } }
                    }
                }
                i += 1
            }
            return Data(bytes)
        }

        /// A 3000 × 3000 AVIF whose container says 100 × 100: its AV1 sequence header says
        /// 3000 × 3000, so the header read already refuses it (`ISOCodedItemCheck`, stop 53;
        /// before, dav1d refused the frame under the container's size given as libavif's limit).
        /// The honest file decodes.
        @Test func anAVIFWhoseFramesAreLargerThanItsContainerIsRefused() throws {
            let picture = NoiseImages.make(width: 3000, height: 3000)
            let honest = try AVIFCoder().encode(picture, as: .avif, quality: 0.3)
            #expect(try AVIFCoder().decode(honest, options: .default).pixelWidth == 3000)
            let lie = Self.lying(honest, width: 100, height: 100)
            let reason = "item 1 is coded at up to 3000 × 3000 but declares 100 × 100"
            #expect(throws: ImageDecodingError.corrupt(format: .avif, reason: reason)) { _ = try AVIFCoder().readHeader(lie) }
            #expect(throws: ImageDecodingError.corrupt(format: .avif, reason: reason)) { _ = try AVIFCoder().decode(lie, options: .default) }
        }

        /// HEIC/HEIF goes to the worker at any size when decodes are isolated: a small header
        /// says nothing about the HEVC frames inside. AVIF and JPEG XL under the minimum stay.
        @Test func aSmallHEIFIsDecodedInTheWorker() {
            let coders = ImageCoderRegistry.default.isolatingDecodes(DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"])))
            for (format, isolated) in [(ImageFormat.heic, true), (.heif, true), (.avif, false), (.jpegXL, false)] {
                let header = ImageHeader(format: format, pixelWidth: 100, pixelHeight: 100, hasAlpha: false)
                #expect(coders.isolatesDecode(of: header, options: .default) == isolated, "\(format)")
            }
        }
    }
}
