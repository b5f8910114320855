internal import CWebP
public import Foundation

/// A still WebP decoded chunk by chunk through one libwebp `WebPIDecoder` kept for the whole
/// download: the ``IncrementalImageDecoding`` of ``WebPCoder``.
///
/// The bytes go into one buffer that doubles when full (libwebp's update mode reads them in
/// place, so no chunk is copied twice and nothing is re-parsed); once the header is complete the
/// pixel limit is checked and the canvas allocated, and from there on each chunk costs only its
/// own decoding. Animations, images over the pixel limit and data libwebp refuses give no partial
/// image, as with ``WebPCoder/decodePartial(_:options:)``, whose images these equal for the same
/// bytes. A chunk is given to libwebp a piece at a time (1/128 of the size the file's RIFF header
/// states, as ``WebPCoder`` does with whole files), with a look at `Task.isCancelled` between
/// pieces: a network chunk of 64 KB can hold a 49 MP solid colour, and a cancelled download stops
/// decoding within one piece (the rest is decoded if more bytes come in a live task).
///
/// ```swift
/// let incremental = WebPIncrementalDecoder(options: .default)
/// incremental.append(firstChunk)
/// let preview = incremental.partialImage()
/// ```
public final class WebPIncrementalDecoder: IncrementalImageDecoding {
    private let core: IncrementalDecoderCore<State>

    public init(options: ImageDecodingOptions = .default) {
        core = IncrementalDecoderCore(options: options, state: State())
    }

    public func append(_ chunk: Data) { core.append(chunk) }

    public func partialImage() -> Image? { core.partialImage() }

    /// libwebp's decoder, the bytes it reads and the canvas it writes, reached only under the lock.
    private final class State: IncrementalDecodingState {
        private var input = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        private var received = 0
        /// How much of `input` libwebp has been given, and at most how much more at a time.
        private var fed = 0
        private var pieceSize = 1 << 16
        private var decoder: OpaquePointer?
        private var canvas: UnsafeMutableBufferPointer<UInt8>?
        private var header: ImageHeader?
        private var failed = false

        deinit {
            if let decoder { WebPIDelete(decoder) }
            free(canvas?.baseAddress)
            input.deallocate()
        }

        func append(_ chunk: Data, options: ImageDecodingOptions) {
            guard !failed, !chunk.isEmpty else { return }
            let old = input
            if received + chunk.count > input.count {
                input = .allocate(byteCount: max(2 * input.count, received + chunk.count, 1 << 16), alignment: 16)
                if let from = old.baseAddress { input.baseAddress?.copyMemory(from: from, byteCount: received) }
            }
            chunk.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: input[received..<(received + chunk.count)]))
            received += chunk.count
            // libwebp keeps pointers into the old buffer until it is told where the bytes are now.
            defer { if old.baseAddress != input.baseAddress { old.deallocate() } }
            if let decoder { return update(decoder) }
            let bytes = Data(bytesNoCopy: input.baseAddress!, count: received, deallocator: .none)
            var features = WebPBitstreamFeatures()
            let status = WebPGetFeatures(input.baseAddress?.assumingMemoryBound(to: UInt8.self), received, &features)
            guard status != VP8_STATUS_NOT_ENOUGH_DATA else { return }  // the header is not complete yet
            guard status == VP8_STATUS_OK, let (header, animated) = try? WebPCoder.inspect(bytes), !animated,
                  (try? options.checkPixelLimit(header)) != nil else { return fail() }
            // Zeroed by calloc: fresh pages cost nothing until libwebp writes them (a loop that
            // zeroed 196 MB was most of a cancelled append's CPU in a debug build).
            let count = header.pixelWidth * header.pixelHeight * 4
            guard let memory = calloc(count, 1) else { return fail() }
            let canvas = UnsafeMutableBufferPointer(start: memory.assumingMemoryBound(to: UInt8.self), count: count)
            self.canvas = canvas
            self.header = header
            pieceSize = WebPCoder.pieceSize(codedBytes: Self.statedFileSize(bytes))
            guard let made = WebPINewRGB(MODE_RGBA, canvas.baseAddress, canvas.count, Int32(header.pixelWidth * 4)) else { return fail() }
            decoder = made
            update(made)
        }

        /// The canvas premultiplied, once at least one row has been decoded.
        func partialImage(options: ImageDecodingOptions) -> Image? {
            guard !failed, let decoder, let canvas, let header else { return nil }
            var lastRow: Int32 = 0
            guard WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil, lastRow > 0 else { return nil }
            var pixels = Array(canvas)
            // Without alpha, the decoded rows have alpha 255 and the rows below them are zero:
            // premultiplying changes nothing, and the image is opaque once every row is decoded.
            let isOpaque = header.hasAlpha ? PixelOperations.premultiply(&pixels) : Int(lastRow) == header.pixelHeight
            return Image(
                format: .webp, pixelWidth: header.pixelWidth, pixelHeight: header.pixelHeight, pixels: pixels, isOpaque: isOpaque,
                scale: options.scale
            ).fittingThumbnail(options)
        }

        /// Tells libwebp that the file so far is `input[0 ..< received]` (perhaps moved), a piece
        /// more at a time. The first piece is always given, which also tells libwebp where the
        /// bytes moved to; after it, a cancelled task stops and leaves the rest for later.
        private func update(_ decoder: OpaquePointer) {
            let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
            repeat {
                fed = min(received, fed + pieceSize)
                let status = WebPIUpdate(decoder, base, fed)
                guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else { return fail() }
            } while fed < received && !Task.isCancelled
        }

        /// The file's size as its RIFF header states it (not trusted beyond choosing a piece size,
        /// which `WebPCoder.pieceSize` bounds to 256 bytes – 64 KB).
        private static func statedFileSize(_ bytes: Data) -> Int {
            guard bytes.count >= 8 else { return 0 }
            let start = bytes.startIndex
            return (4..<8).reduce(8) { $0 + Int(bytes[start + $1]) << (8 * ($1 - 4)) }
        }

        private func fail() {
            failed = true
        }
    }
}
