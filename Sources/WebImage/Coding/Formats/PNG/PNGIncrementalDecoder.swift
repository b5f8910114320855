internal import CPNGIncremental
public import Foundation

/// A PNG decoded chunk by chunk by one libpng progressive reader kept for the whole download:
/// the ``IncrementalImageDecoding`` of ``PNGCoder``.
///
/// libpng's push reader keeps its inflate stream and row state between chunks, so each byte is
/// decoded once (libspng's progressive API cannot pause when the data runs out). A plain PNG
/// fills its rows top down, the rows below transparent; an interlaced one fills each Adam7
/// pixel's block (8×8 after the first pass, down to 1×1), so the whole picture appears coarse
/// first and sharpens. A row shows as soon as its bytes are in, whatever the IDAT chunking.
/// ``PNGCoder/decodePartial(_:options:)`` is this decoder given the prefix at once, so both give
/// the same image for the same bytes; once all data is in, the image is the full decode's. The
/// pixel limit is checked from the header before the canvas is allocated; corrupt data (a bad
/// CRC in a critical chunk, a broken deflate stream) gives no partial image from then on.
///
/// ```swift
/// let incremental = PNGIncrementalDecoder(options: .default)
/// incremental.append(firstChunk)
/// let preview = incremental.partialImage()
/// ```
public final class PNGIncrementalDecoder: IncrementalImageDecoding {
    private let core: IncrementalDecoderCore<State>

    public init(options: ImageDecodingOptions = .default) {
        core = IncrementalDecoderCore(options: options, state: State(options: options))
    }

    public func append(_ chunk: Data) { core.append(chunk) }

    public func partialImage() -> Image? { core.partialImage() }

    /// The C decoder, which owns the canvas it writes; reached only under the core's lock (or by
    /// one prefix decode, which makes its own).
    final class State: IncrementalDecodingState {
        private let decoder: OpaquePointer?
        private var failed = false

        init(options: ImageDecodingOptions) {
            decoder = wi_png_incremental_create(UInt64(max(options.maxPixelCount, 0)))
        }

        deinit { wi_png_incremental_destroy(decoder) }

        func append(_ chunk: Data, options: ImageDecodingOptions) {
            guard !failed, let decoder, !chunk.isEmpty else { return }
            let status = chunk.withUnsafeBytes {
                wi_png_incremental_append(decoder, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count)
            }
            if status == WI_PNG_FAILED { failed = true }
        }

        /// The canvas premultiplied; `nil` before the first row or after a failure.
        func partialImage(options: ImageDecodingOptions) -> Image? {
            guard !failed, let decoder, wi_png_incremental_rows(decoder) > 0, let canvas = wi_png_incremental_canvas(decoder) else {
                return nil
            }
            var width: Int32 = 0, height: Int32 = 0
            wi_png_incremental_size(decoder, &width, &height)
            // The rows written so far are the top ones: a plain image's decoded rows, an interlaced
            // one's first-pass blocks, all of them once a later pass has begun. Only those are
            // premultiplied; the rest stay transparent (zero), so the image is not opaque yet.
            let rowBytes = Int(width) * 4, rows = Int(wi_png_incremental_rows(decoder))
            let written = wi_png_incremental_interlaced(decoder) != 0 && wi_png_incremental_pass(decoder) > 0 ? Int(height) : min(rows, Int(height))
            var pixels = Array(UnsafeBufferPointer(start: canvas, count: written * rowBytes))
            let isOpaque = PixelOperations.premultiply(&pixels) && written == Int(height)
            if written < Int(height) { pixels += [UInt8](repeating: 0, count: (Int(height) - written) * rowBytes) }
            return Image(format: .png, pixelWidth: Int(width), pixelHeight: Int(height), pixels: pixels, isOpaque: isOpaque, scale: options.scale)
                .fittingThumbnail(options)
        }
    }
}
