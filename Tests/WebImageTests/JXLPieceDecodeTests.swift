import Foundation
import Testing
@testable import WebImage

/// JPEG XL is given to libjxl 64 KB at a time (so that a cancel can stop it between pieces): the
/// image, and the error for a cut or damaged file, are those of the file given in one piece and
/// one call (`pieceSize: .max`, the decode before pieces).
@Suite("JPEG XL decoded in pieces", .cpuBound)
struct JXLPieceDecodeTests {
    /// What a decode gave, comparable: every pixel and property, or the error.
    enum Outcome: Equatable {
        case image(width: Int, height: Int, pixels: [UInt8], isOpaque: Bool, orientation: ImageOrientation,
                   frameCount: Int, loopCount: Int, frames: [[UInt8]], durations: [Duration], repairs: ImageRepairs)
        case failed(ImageDecodingError)

        init(_ data: Data, options: ImageDecodingOptions = .default, pieceSize: Int) {
            do throws(ImageDecodingError) {
                let image = try JXLCoder().decode(data, options: options, pieceSize: pieceSize)
                self = .image(
                    width: image.pixelWidth, height: image.pixelHeight, pixels: image.pixels, isOpaque: image.isOpaque,
                    orientation: image.orientation, frameCount: image.frameCount, loopCount: image.loopCount,
                    frames: image.frames.map(\.pixels), durations: image.frames.map(\.duration), repairs: image.repairs)
            } catch {
                self = .failed(error)
            }
        }

        var isImage: Bool { if case .image = self { true } else { false } }
    }

    /// The JPEG XL fixtures: lossless, alpha, container, lossy, animated, ICC, P3, PQ and 16-bit
    /// ProPhoto (16-bit output, converted before narrowing).
    static func fixtures() throws -> [(String, Data)] {
        let colour = CodecFixtures.directory.deletingLastPathComponent().appendingPathComponent("color")
        return try ["jxl-lossless", "jxl-alpha", "jxl-container", "jxl-lossy", "jxl-animated"].map { ($0, try CodecFixtures.data("\($0).jxl")) }
            + ["sources/jxl-icc-adobe.jxl", "sources/jxl-encoded-p3.jxl", "hdr/pq-grey-patches.jxl", "depth/prophoto-16bit-ramp.jxl"].map {
                ($0, try Data(contentsOf: colour.appendingPathComponent($0)))
            }
    }

    @Test func aLargeFileInPiecesIsTheOneCallImage() async throws {
        let data = try await LargeJXL.photo.value
        #expect(data.count > 8 * JXLCoder.Session.pieceSize, "a file of many pieces (\(data.count) bytes)")
        let options = ImageDecodingOptions(maxPixelCount: 100_000_000)
        let whole = Outcome(data, options: options, pieceSize: .max)
        guard case .image(let width, let height, let pixels, _, _, _, _, _, _, _) = whole else {
            Issue.record("one call: \(whole)")
            return
        }
        #expect(width == LargeJXL.side && height == LargeJXL.side)
        #expect(Outcome(data, options: options, pieceSize: JXLCoder.Session.pieceSize) == whole)
        // The public decode is the piecewise one, with the same pixels.
        #expect(try JXLCoder().decode(data, options: options).pixels == pixels)
        // A thumbnail and the first frame only, as in one call.
        let thumbnail = ImageDecodingOptions(maxPixelCount: 100_000_000, thumbnailMaxPixelSize: 200)
        #expect(Outcome(data, options: thumbnail, pieceSize: 1 << 16) == Outcome(data, options: thumbnail, pieceSize: .max))
    }

    /// Pieces of every size from a few bytes (libjxl asks again inside headers and box headers) up.
    @Test func everyFixtureInPiecesIsTheOneCallImage() throws {
        for (name, data) in try Self.fixtures() {
            let whole = Outcome(data, pieceSize: .max)
            #expect(whole.isImage, "\(name)")
            for pieceSize in [1, 7, 100, 1000, 1 << 16] {
                #expect(Outcome(data, pieceSize: pieceSize) == whole, "\(name) in pieces of \(pieceSize)")
            }
            let first = ImageDecodingOptions(firstFrameOnly: true)
            #expect(Outcome(data, options: first, pieceSize: 100) == Outcome(data, options: first, pieceSize: .max), "\(name)")
        }
    }

    @Test func cutAndDamagedFilesFailAsInOneCall() throws {
        for (name, data) in try Self.fixtures() {
            var damaged = data
            for offset in stride(from: 20, to: damaged.count, by: 13) { damaged[offset] ^= 0xA5 }
            let variants = [1, 2, 12, data.count / 3, data.count / 2, data.count - 1].map { data.prefix($0) } + [damaged]
            for (index, variant) in variants.enumerated() {
                let whole = Outcome(variant, pieceSize: .max)
                for pieceSize in [1, 100, 1 << 16] {
                    #expect(Outcome(variant, pieceSize: pieceSize) == whole, "\(name), variant \(index), pieces of \(pieceSize)")
                }
            }
        }
    }
}
