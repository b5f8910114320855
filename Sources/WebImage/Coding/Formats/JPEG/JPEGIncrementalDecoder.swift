internal import CJPEGIncremental
public import Foundation

/// A JPEG decoded chunk by chunk by one libjpeg decoder kept for the whole download: the
/// ``IncrementalImageDecoding`` of ``JPEGCoder``.
///
/// libjpeg reads from a suspending source: when the bytes run out it stops where it was, and the
/// next chunk goes on from there (only unconsumed bytes are kept). A sequential (baseline) JPEG
/// fills its rows top down, the rows below transparent; a progressive one is read in
/// buffered-image mode: each chunk only adds its coefficients, and a partial image is one output
/// pass of the last complete scan, the whole picture growing sharper scan by scan (the prefix
/// decode shows the same scans, filled differently). Once all data is in, the image is the full
/// decode's. The pixel limit is checked from the header before the canvas is allocated; more
/// than 500 scans (as `TJFLAG_LIMITSCANS`), CMYK files and corrupt data give no partial image.
///
/// ```swift
/// let incremental = JPEGIncrementalDecoder(options: .default)
/// incremental.append(firstChunk)
/// let preview = incremental.partialImage()
/// ```
public final class JPEGIncrementalDecoder: IncrementalImageDecoding {
    private let core: IncrementalDecoderCore<State>

    public init(options: ImageDecodingOptions = .default) {
        core = IncrementalDecoderCore(options: options, state: State())
    }

    public func append(_ chunk: Data) { core.append(chunk) }

    public func partialImage() -> Image? { core.partialImage() }

    /// The C decoder and the canvas it writes, reached only under the lock.
    private final class State: IncrementalDecodingState {
        private let decoder = wi_jpeg_incremental_create(500)
        private var canvas: UnsafeMutableBufferPointer<UInt8>?
        private var size = (width: 0, height: 0)
        private var failed = false

        deinit {
            wi_jpeg_incremental_destroy(decoder)
            free(canvas?.baseAddress)
        }

        func append(_ chunk: Data, options: ImageDecodingOptions) {
            guard !failed, let decoder, !chunk.isEmpty else { return }
            var status = chunk.withUnsafeBytes {
                wi_jpeg_incremental_append(decoder, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count)
            }
            if status == WI_JPEG_HEADER_READY {
                var width: Int32 = 0, height: Int32 = 0
                wi_jpeg_incremental_size(decoder, &width, &height)
                let header = ImageHeader(format: .jpeg, pixelWidth: Int(width), pixelHeight: Int(height), hasAlpha: false)
                guard width > 0, height > 0, (try? options.checkPixelLimit(header)) != nil else {
                    failed = true
                    return
                }
                size = (Int(width), Int(height))
                // Zeroed by calloc: fresh pages, not a loop over the whole canvas (slow in a
                // debug build, and no cancel check inside it).
                guard let memory = calloc(size.width * size.height * 4, 1) else {
                    failed = true
                    return
                }
                let canvas = UnsafeMutableBufferPointer(start: memory.assumingMemoryBound(to: UInt8.self), count: size.width * size.height * 4)
                self.canvas = canvas
                status = wi_jpeg_incremental_start(decoder, canvas.baseAddress, size.width * 4)
            }
            if status == WI_JPEG_FAILED { failed = true }
        }

        /// The canvas after the decoder has drawn what it has; `nil` while there is nothing.
        func partialImage(options: ImageDecodingOptions) -> Image? {
            guard !failed, let decoder, let canvas else { return nil }
            let rows = Int(wi_jpeg_incremental_render(decoder))
            guard rows > 0 else {
                if rows < 0 { failed = true }
                return nil
            }
            // Decoded rows are opaque; rows not decoded yet are transparent.
            return Image(
                format: .jpeg, pixelWidth: size.width, pixelHeight: size.height, pixels: Array(canvas),
                isOpaque: rows == size.height, scale: options.scale
            ).fittingThumbnail(options)
        }
    }
}
