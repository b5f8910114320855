import Foundation
import Testing
import WebImage

/// `Image` takes its buffers as given; every encoder and processor checks them before a C
/// library or a pointer loop reads them, and refuses with a typed error instead of reading past
/// the end.
@Suite("Inconsistent image buffers are refused, never read past their end")
struct ImageValidationTests {
    static let encodable: [ImageFormat] = [.jpeg, .png, .apng, .gif, .webp, .avif, .heic]

    static func image(width: Int, height: Int, bytes: Int, bytesPerRow: Int? = nil) -> Image {
        Image(format: .png, pixelWidth: width, pixelHeight: height, bytesPerRow: bytesPerRow,
              pixels: [UInt8](repeating: 200, count: bytes), isOpaque: true)
    }

    @Test(arguments: encodable)
    func everyEncoderRefusesAShortBuffer(format: ImageFormat) throws {
        let cases: [(Image, String)] = [
            (Self.image(width: 100, height: 100, bytes: 16), "cannot hold 100 × 100"),
            (Self.image(width: 0, height: 10, bytes: 0), "0 × 10"),
            (Self.image(width: 10, height: 10, bytes: 400, bytesPerRow: 8), "bytes per row"),
            (Self.image(width: Int.max / 2, height: 2, bytes: 64), "bytes per row"),
        ]
        for (image, words) in cases {
            do {
                _ = try ImageCoderRegistry.default.encode(image, as: format)
                Issue.record("\(format) encoded an inconsistent image")
            } catch {
                guard case .encodingFailed(let failed, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(failed == format && reason.contains(words), "\(reason)")
            }
        }
        // The same sizes with whole buffers encode and decode back.
        let whole = Self.image(width: 16, height: 8, bytes: 16 * 8 * 4)
        #expect(whole.bufferProblem == nil)
        let data = try ImageCoderRegistry.default.encode(whole, as: format)
        #expect(try ImageCoderRegistry.default.decode(data).pixelWidth == 16)
    }

    @Test func aShortAnimationFrameIsRefused() throws {
        let good = ImageFrame(pixels: [UInt8](repeating: 255, count: 4 * 4 * 4), duration: .milliseconds(100))
        let short = ImageFrame(pixels: [UInt8](repeating: 255, count: 10), duration: .milliseconds(100))
        let animation = Image(format: .gif, pixelWidth: 4, pixelHeight: 4, frames: [good, short], loopCount: 0)
        #expect(animation.bufferProblem == "frame 1 has 10 bytes, not 64")
        for format: ImageFormat in [.gif, .webp, .apng] {
            #expect(throws: ImageEncodingError.encodingFailed(format: format, reason: "frame 1 has 10 bytes, not 64")) {
                _ = try ImageCoderRegistry.default.encode(animation, as: format)
            }
        }
    }

    @Test func processorsRefuseTheSameWay() {
        let broken = Self.image(width: 100, height: 100, bytes: 16)
        let processors: [any ImageProcessing] = [
            .resize(width: 10, height: 10), .flip(.horizontal), ImageProcessors.GaussianBlur(radius: 2),
        ]
        for processor in processors {
            #expect(throws: ImageProcessingError.self) { _ = try broken.processed(by: [processor]) }
        }
    }
}
