import CSpng
import Foundation
import WebImage
import WebImageOrigin

/// `WebImageMeasure chunks`: what one chunk of a download costs the progressive preview, as the
/// data grows, for a 2000×1500 (3 MP) picture as WebP (lossy, lossless), JPEG (baseline,
/// progressive) and PNG (plain, Adam7-interlaced): the incremental decoder kept for the download
/// (the chunk's decode, then the preview image) against decoding the whole prefix again
/// (`decodePartial`; for PNG the same libpng reader given the prefix at once). Chunks of 1/40 of
/// the file, fed one by one as a download does; the chunk ending at 10 %, 50 % and 90 % is timed;
/// median of `rounds` runs; one line per file and point, in microseconds.
func measureChunkCost(rounds: Int) throws {
    let picture = SampleImages.pattern(width: 2000, height: 1500, seed: 31)
    let files: [(String, Data, any ProgressiveImageDecoding, ImageFormat)] = [
        ("WebP lossy q80", try WebPCoder().encode(picture, as: .webp, quality: 0.8), WebPCoder(), .webp),
        ("WebP lossless", try WebPCoder().encode(picture, as: .webp, quality: 1), WebPCoder(), .webp),
        ("JPEG baseline q85", try JPEGCoder().encode(picture, as: .jpeg, quality: 0.85), JPEGCoder(), .jpeg),
        ("JPEG progressive q85", try JPEGCoder(progressive: true).encode(picture, as: .jpeg, quality: 0.85), JPEGCoder(), .jpeg),
        ("PNG", try PNGCoder().encode(picture, as: .png, quality: 1), PNGCoder(), .png),
        ("PNG interlaced", try interlacedPNG(picture), PNGCoder(), .png),
    ]
    func microseconds(_ body: () -> Void) -> Double {
        let started = ContinuousClock.now
        body()
        return Double((ContinuousClock.now - started) / .nanoseconds(1)) / 1000
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    for (name, data, coder, format) in files {
        let chunk = max(1, data.count / 40)
        for percent in [10, 50, 90] {
            let end = data.count * percent / 100, start = end - chunk
            var append: [Double] = [], preview: [Double] = [], prefix: [Double] = []
            for _ in 0..<rounds {
                guard let incremental = coder.makeIncrementalDecoder(for: format, options: .default) else { return }
                for offset in stride(from: 0, to: start, by: chunk) { incremental.append(data[offset..<min(offset + chunk, start)]) }
                append.append(microseconds { incremental.append(data[start..<end]) })
                preview.append(microseconds { _ = incremental.partialImage() })
                let bytes = Data(data.prefix(end))
                prefix.append(microseconds { _ = coder.decodePartial(bytes, options: .default) })
            }
            let line = String(
                format: "%@ (%d KB, chunk %d KB) at %d%%: incremental %.0f µs (decode %.0f + preview %.0f), prefix re-decode %.0f µs",
                name, data.count / 1024, chunk / 1024, percent, median(append) + median(preview), median(append), median(preview),
                median(prefix))
            print(line)
        }
    }
}

/// `image` (opaque) as an Adam7-interlaced RGB PNG, which ``PNGCoder`` does not write: libspng's
/// encoder with `interlace_method` 1.
func interlacedPNG(_ image: Image) throws -> Data {
    struct EncodingFailed: Error { var status: Int32 }
    guard let ctx = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else { throw EncodingFailed(status: -1) }
    defer { spng_ctx_free(ctx) }
    spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1)
    var ihdr = spng_ihdr()
    ihdr.width = UInt32(image.pixelWidth)
    ihdr.height = UInt32(image.pixelHeight)
    ihdr.bit_depth = 8
    ihdr.color_type = UInt8(SPNG_COLOR_TYPE_TRUECOLOR.rawValue)
    ihdr.interlace_method = 1
    let rgb = image.pixels.enumerated().compactMap { $0.offset % 4 == 3 ? nil : $0.element }
    var status = spng_set_ihdr(ctx, &ihdr)
    if status == 0 {
        status = rgb.withUnsafeBytes { spng_encode_image(ctx, $0.baseAddress, $0.count, Int32(SPNG_FMT_PNG.rawValue), Int32(SPNG_ENCODE_FINALIZE.rawValue)) }
    }
    var length = 0, error: Int32 = 0
    guard status == 0, let buffer = spng_get_png_buffer(ctx, &length, &error), error == 0 else { throw EncodingFailed(status: status) }
    defer { free(buffer) }
    return Data(bytes: buffer, count: length)
}
