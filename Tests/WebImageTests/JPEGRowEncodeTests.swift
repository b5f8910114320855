import CJPEGIncremental
import CTurboJPEG
import Foundation
import Testing
import WebImage
import WebImageOrigin

/// JPEGs are written a batch of rows at a time through libjpeg's API (so that a cancel stops a
/// large encode: one `tjCompress2` call writes 64 MP of noise in about 0.5 s that nothing can
/// stop), with TurboJPEG's settings: the bytes are those of the one call used before. (A timed
/// cancel of a 36 MP encode was tried first: on a loaded machine the encode could finish before
/// the cancel came, so the stop is tested deterministically instead.)
@Suite("JPEG written row by row", .serialized)
struct JPEGRowEncodeTests {
    /// TurboJPEG's one-call encode, as `JPEGCoder` made it before.
    static func turboJPEG(_ image: Image, quality: Int32, gray: Bool, progressive: Bool) throws -> Data {
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let result = image.pixels.withUnsafeBufferPointer { src in
            tjCompress2(
                handle, src.baseAddress, Int32(image.pixelWidth), Int32(image.bytesPerRow), Int32(image.pixelHeight),
                Int32(TJPF_RGBA.rawValue), &output, &size, Int32((gray ? TJSAMP_GRAY : TJSAMP_420).rawValue), quality,
                progressive ? TJFLAG_PROGRESSIVE : 0)
        }
        defer { tjFree(output) }
        #expect(result == 0)
        return Data(bytes: try #require(output), count: Int(size))
    }

    @Test(arguments: [1, 50, 80, 95, 96, 100])
    func theBytesAreTurboJPEGs(quality: Int) throws {
        // Odd sides: partial MCUs at the right and bottom edges, and a batch of rows cut short.
        let images = [SampleImages.pattern(width: 333, height: 217, seed: 4), SampleImages.pattern(width: 1, height: 1), SampleImages.pattern(width: 17, height: 40, seed: 9)]
        for image in images {
            for (gray, progressive) in [(false, false), (true, false), (false, true), (true, true)] {
                let ours = try JPEGCoder(progressive: progressive, grayscale: gray).encode(image, as: .jpeg, quality: Double(quality) / 100)
                let theirs = try Self.turboJPEG(image, quality: Int32(quality), gray: gray, progressive: progressive)
                #expect(ours == theirs, "\(image.pixelWidth)×\(image.pixelHeight) q\(quality) gray \(gray) progressive \(progressive)")
            }
        }
    }

    /// The writer asks `should_stop` once per batch of 16 rows and per iMCU row of a progressive
    /// file's later passes, and a yes ends it at once with nothing written or leaked (a stop in
    /// the middle of the rows, and one in a progressive file's final passes). Deterministic: the
    /// callback counts its calls and says stop at the chosen one.
    @Test(arguments: [(false, 5), (true, 5), (true, 30)])
    func theWriterStopsWhereItIsAsked(progressive: Bool, stopAt: Int32) throws {
        let image = SampleImages.pattern(width: 320, height: 240, seed: 2)  // 15 batches of 16 rows
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        JPEGStopCounter.calls = 0
        JPEGStopCounter.stopAt = stopAt
        let status = image.pixels.withUnsafeBufferPointer { src in
            wi_jpeg_write(src.baseAddress, 320, 240, image.bytesPerRow, 90, 0, progressive ? 1 : 0,
                          { JPEGStopCounter.calls += 1; return JPEGStopCounter.calls >= JPEGStopCounter.stopAt ? 1 : 0 },
                          &output, &size, &message, message.count)
        }
        #expect(status == WI_JPEG_ROWS_STOPPED && output == nil && size == 0)
        #expect(JPEGStopCounter.calls == stopAt)
        // Without a stop: every batch asked (15), and a progressive file's passes too.
        JPEGStopCounter.calls = 0
        JPEGStopCounter.stopAt = .max
        let written = image.pixels.withUnsafeBufferPointer { src in
            wi_jpeg_write(src.baseAddress, 320, 240, image.bytesPerRow, 90, 0, progressive ? 1 : 0,
                          { JPEGStopCounter.calls += 1; return JPEGStopCounter.calls >= JPEGStopCounter.stopAt ? 1 : 0 },
                          &output, &size, &message, message.count)
        }
        defer { free(output) }
        #expect(written == WI_JPEG_ROWS_OK && size > 0)
        #expect(progressive ? JPEGStopCounter.calls > 30 : JPEGStopCounter.calls >= 15, "\(JPEGStopCounter.calls) calls")
    }

    /// Through `JPEGCoder`: a cancelled task writes nothing.
    @Test func aCancelledEncodeThrowsCancelled() async throws {
        let task = Task.detached {
            withUnsafeCurrentTask { $0?.cancel() }
            return try JPEGCoder().encode(SampleImages.pattern(width: 64, height: 64), as: .jpeg, quality: 0.8)
        }
        await #expect(throws: ImageEncodingError.cancelled) { try await task.value }
    }
}

/// The stop callback's state (a C function pointer captures nothing). The suite runs its cases
/// one at a time on this state (`.serialized` below).
enum JPEGStopCounter {
    nonisolated(unsafe) static var calls: Int32 = 0
    nonisolated(unsafe) static var stopAt: Int32 = .max
}
