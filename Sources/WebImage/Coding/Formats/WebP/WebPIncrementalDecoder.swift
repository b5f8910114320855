internal import CWebP
public import Foundation

/// A still WebP decoded chunk by chunk through one libwebp `WebPIDecoder` kept for the whole
/// download: the ``IncrementalImageDecoding`` of ``WebPCoder``.
///
/// Bytes are held back until the header is complete; then the pixel limit is checked, the
/// canvas allocated, and from there on each chunk costs only its own decoding. Animations, images
/// over the pixel limit and data libwebp refuses give no partial image, as with
/// ``WebPCoder/decodePartial(_:options:)``, whose images these equal for the same bytes.
///
/// ```swift
/// let incremental = WebPIncrementalDecoder(options: .default)
/// incremental.append(firstChunk)
/// let preview = incremental.partialImage()
/// ```
public final class WebPIncrementalDecoder: IncrementalImageDecoding {
    private let options: ImageDecodingOptions
    private let state = Locked(State())

    public init(options: ImageDecodingOptions = .default) {
        self.options = options
    }

    public func append(_ chunk: Data) {
        let options = options
        state.withLock { $0.append(chunk, options: options) }
    }

    public func partialImage() -> Image? {
        let options = options
        return state.withLock { state -> Image? in
            guard let (pixels, width, height) = state.decodedPixels() else { return nil }
            var premultiplied = pixels
            let isOpaque = PixelOperations.premultiply(&premultiplied)
            return Image(
                format: .webp, pixelWidth: width, pixelHeight: height, pixels: premultiplied, isOpaque: isOpaque,
                scale: options.scale
            ).fittingThumbnail(options)
        }
    }

    /// libwebp's decoder and the canvas it writes into, reached only under the lock.
    private final class State {
        private var pending = Data()
        private var decoder: OpaquePointer?
        private var canvas: UnsafeMutableBufferPointer<UInt8>?
        private var size = (width: 0, height: 0)
        private var failed = false

        deinit {
            if let decoder { WebPIDelete(decoder) }
            canvas?.deallocate()
        }

        func append(_ chunk: Data, options: ImageDecodingOptions) {
            guard !failed else { return }
            if let decoder {
                feed(decoder, chunk)
                return
            }
            pending.append(chunk)
            var features = WebPBitstreamFeatures()
            let status = pending.withUnsafeBytes { WebPGetFeatures($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, &features) }
            guard status != VP8_STATUS_NOT_ENOUGH_DATA else { return }  // the header is not complete yet
            guard status == VP8_STATUS_OK, let (header, animated) = try? WebPCoder.inspect(pending), !animated,
                  (try? options.checkPixelLimit(header)) != nil else { return fail() }
            size = (header.pixelWidth, header.pixelHeight)
            let canvas = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: size.width * size.height * 4)
            canvas.initialize(repeating: 0)
            self.canvas = canvas
            guard let made = WebPINewRGB(MODE_RGBA, canvas.baseAddress, canvas.count, Int32(size.width * 4)) else { return fail() }
            decoder = made
            feed(made, pending)
            pending = Data()
        }

        /// A copy of the canvas (straight RGBA8) when at least one row has been decoded.
        func decodedPixels() -> (pixels: [UInt8], width: Int, height: Int)? {
            guard !failed, let decoder, let canvas else { return nil }
            var lastRow: Int32 = 0
            guard WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil, lastRow > 0 else { return nil }
            return (Array(canvas), size.width, size.height)
        }

        private func feed(_ decoder: OpaquePointer, _ bytes: Data) {
            let status = bytes.withUnsafeBytes { WebPIAppend(decoder, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
            if status != VP8_STATUS_OK && status != VP8_STATUS_SUSPENDED { fail() }
        }

        private func fail() {
            failed = true
            pending = Data()
        }
    }
}
