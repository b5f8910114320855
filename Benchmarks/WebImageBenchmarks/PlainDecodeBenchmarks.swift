import Benchmark
import CAvif
import CGIF
import CHeif
import CSpng
import CWebP
import CTurboJPEGPlain
import Foundation
import WebImage

// Each C library called directly on the same fixture bytes as the coders' benchmarks in
// CodingBenchmarks.swift, producing the same pixels into a new buffer per decode (as any decoder
// that returns an image must): the difference to the coder is the wrapper's own cost
// (issue 4: wrapper ≥ 0.9× the plain library). Errors trap: the fixtures are known good.
//
// Coder and plain decode are measured as pairs, alternating which goes first, and each pair's
// ratio is recorded: on a shared 2-core VM whose speed drifts by ±20 % over minutes, two
// benchmarks run a minute apart compare the machine's moods, while the median of paired ratios
// compares the code. scripts/measure/bench_ratios.py reads the p50 of these metrics.

enum PairedMetric {
    static let coder = BenchmarkMetric.custom("coder_ns")
    static let plain = BenchmarkMetric.custom("plain_ns")
    /// (plain time ÷ coder time) × 1000: the coder's decode rate relative to the library's.
    static let ratio = BenchmarkMetric.custom("ratio_permille", polarity: .prefersLarger, useScalingFactor: false)
}

func plainDecodeBenchmarks() {
    let pairs: [(String, @Sendable () -> Data, @Sendable (Data) -> Any)] = [
        ("JPEG 1 MP", { codingFixtures.jpeg1MP }, { PlainDecode.jpeg($0, width: 1000, height: 1000) }),
        ("PNG 1 MP RGBA", { codingFixtures.png1MP }, { PlainDecode.png($0) }),
        ("WebP lossy 1 MP", { codingFixtures.webpLossy1MP }, { PlainDecode.webp($0, width: 1000, height: 1000) }),
        ("WebP lossless 1 MP", { codingFixtures.webpLossless1MP }, { PlainDecode.webp($0, width: 1000, height: 1000) }),
        ("GIF 1 MP (500×200 × 10 frames)", { codingFixtures.gif10Frames }, { PlainDecode.gif($0) }),
        ("AVIF 1 MP", { codingFixtures.avif1MP }, { PlainDecode.avif($0) }),
        ("HEIF 1 MP", { codingFixtures.heic1MP }, { PlainDecode.heif($0) }),
        // For information: libspng alone, straight alpha (not the layout `Image` documents).
        ("PNG 1 MP RGBA, plain without premultiplying", { codingFixtures.png1MP }, { PlainDecode.png($0, premultiply: false) }),
    ]
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, PairedMetric.coder, PairedMetric.plain, PairedMetric.ratio], timeUnits: .nanoseconds,
        maxDuration: .seconds(5))
    for (name, input, plain) in pairs {
        Benchmark("Paired decode \(name): coder vs plain C", configuration: configuration) { benchmark in
            let data = input()
            let clock = ContinuousClock()
            for index in benchmark.scaledIterations {
                var coderTime = Duration.zero, plainTime = Duration.zero
                func coder() throws { coderTime = try clock.measure { blackHole(try ImageCoderRegistry.default.decode(data)) } }
                func library() { plainTime = clock.measure { blackHole(plain(data)) } }
                if index.isMultiple(of: 2) {
                    try coder(); library()
                } else {
                    library(); try coder()
                }
                let coderNanoseconds = Int(coderTime / .nanoseconds(1)), plainNanoseconds = Int(plainTime / .nanoseconds(1))
                benchmark.measurement(PairedMetric.coder, coderNanoseconds)
                benchmark.measurement(PairedMetric.plain, plainNanoseconds)
                benchmark.measurement(PairedMetric.ratio, plainNanoseconds * 1000 / max(coderNanoseconds, 1))
            }
        }
    }
}

/// Minimal decoders over the C libraries, written the way their documentation shows.
enum PlainDecode {
    static func uninitialized(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// TurboJPEG straight into RGBA8.
    static func jpeg(_ data: Data, width: Int, height: Int) -> [UInt8] {
        let handle = tjInitDecompress()
        defer { tjDestroy(handle) }
        var pixels = uninitialized(width * height * 4)
        let result = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(
                    handle, src.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(src.count),
                    dst.baseAddress, Int32(width), Int32(width * 4), Int32(height), Int32(TJPF_RGBA.rawValue), 0)
            }
        }
        precondition(result == 0)
        return pixels
    }

    /// libspng to RGBA8 (tRNS applied), then premultiplied: the premultiplication is part of the
    /// equivalent work, because the documented output of any decoder here is premultiplied RGBA8
    /// (`Image`), and libspng has no premultiplied output format. The loop is the textbook one.
    static func png(_ data: Data, premultiply: Bool = true) -> [UInt8] {
        let ctx = spng_ctx_new(0)!
        defer { spng_ctx_free(ctx) }
        let format = Int32(SPNG_FMT_RGBA8.rawValue)
        var pixels: [UInt8] = []
        data.withUnsafeBytes { src in
            precondition(spng_set_png_buffer(ctx, src.baseAddress, src.count) == 0)
            var size = 0
            precondition(spng_decoded_image_size(ctx, format, &size) == 0)
            pixels = uninitialized(size)
            let status = pixels.withUnsafeMutableBytes { out in
                spng_decode_image(ctx, out.baseAddress, out.count, format, Int32(SPNG_DECODE_TRNS.rawValue))
            }
            precondition(status == 0)
        }
        guard premultiply else { return pixels }
        pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a != 255 {
                    p[i] = UInt8((UInt32(p[i]) * a + 127) / 255)
                    p[i + 1] = UInt8((UInt32(p[i + 1]) * a + 127) / 255)
                    p[i + 2] = UInt8((UInt32(p[i + 2]) * a + 127) / 255)
                }
                i += 4
            }
        }
        return pixels
    }

    /// libwebp's simple API into a buffer we own (the fixtures are opaque: nothing to premultiply).
    static func webp(_ data: Data, width: Int, height: Int) -> [UInt8] {
        var pixels = uninitialized(width * height * 4)
        let result = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { out in
                WebPDecodeRGBAInto(
                    src.baseAddress!.assumingMemoryBound(to: UInt8.self), src.count, out.baseAddress, out.count, Int32(width * 4))
            }
        }
        precondition(result != nil)
        return pixels
    }

    /// libavif: parse, decode the one frame, convert YUV → RGBA8 (the fixture is opaque).
    static func avif(_ data: Data) -> [UInt8] {
        let decoder = avifDecoderCreate()!
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1  // as AVIFCoder: one core per decode
        return data.withUnsafeBytes { src in
            precondition(avifDecoderSetIOMemory(decoder, src.baseAddress!.assumingMemoryBound(to: UInt8.self), src.count) == AVIF_RESULT_OK)
            precondition(avifDecoderParse(decoder) == AVIF_RESULT_OK)
            precondition(avifDecoderNextImage(decoder) == AVIF_RESULT_OK)
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, decoder.pointee.image)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            var pixels = uninitialized(Int(rgb.width) * Int(rgb.height) * 4)
            let status = pixels.withUnsafeMutableBufferPointer { out in
                rgb.pixels = out.baseAddress
                rgb.rowBytes = rgb.width * 4
                return avifImageYUVToRGB(decoder.pointee.image, &rgb)
            }
            precondition(status == AVIF_RESULT_OK)
            return pixels
        }
    }

    /// libheif: parse, decode the primary image to interleaved RGBA8 (the fixture is opaque) and
    /// read its plane in place, the cheapest way to reach the pixels (no copy of our own).
    static func heif(_ data: Data) -> Int {
        _ = heifInitialized
        let context = heif_context_alloc()!
        defer { heif_context_free(context) }
        heif_context_set_max_decoding_threads(context, 1)  // as HEIFCoder
        return data.withUnsafeBytes { src in
            precondition(heif_context_read_from_memory_without_copy(context, src.baseAddress, src.count, nil).code == heif_error_Ok)
            var handle: OpaquePointer?
            precondition(heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok)
            defer { heif_image_handle_release(handle) }
            var image: OpaquePointer?
            precondition(heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, nil).code == heif_error_Ok)
            defer { heif_image_release(image) }
            var stride: Int32 = 0
            let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride)!
            return Int(plane[0]) + Int(stride)
        }
    }

    static let heifInitialized = heif_init(nil).code == heif_error_Ok
}
