internal import CWebP
public import Foundation

extension WebPCoder: ProgressiveImageDecoding {
    public func canDecodeProgressively(_ format: ImageFormat) -> Bool { format == .webp }

    /// A ``WebPIncrementalDecoder``: one libwebp incremental decoder for the whole download.
    public func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions) -> (any IncrementalImageDecoding)? {
        format == .webp ? WebPIncrementalDecoder(options: options) : nil
    }

    /// The rows libwebp's incremental decoder (`WebPINewRGB`, `WebPIAppend`) gets from the first bytes of a
    /// still WebP, decoded from scratch; rows not yet decoded are transparent. Animations give `nil`
    /// until complete. A download uses ``makeIncrementalDecoder(for:options:)`` instead.
    ///
    /// ```swift
    /// let preview = WebPCoder().decodePartial(firstBytes, options: .default)
    /// ```
    public func decodePartial(_ data: Data, options: ImageDecodingOptions) -> Image? {
        guard let (header, animated) = try? Self.inspect(data), !animated,
              (try? options.checkPixelLimit(header)) != nil else { return nil }
        let width = header.pixelWidth, height = header.pixelHeight
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let rows = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { dst -> Int32 in
                guard let decoder = WebPINewRGB(MODE_RGBA, dst.baseAddress, dst.count, Int32(width * 4)) else { return 0 }
                defer { WebPIDelete(decoder) }
                let status = WebPIAppend(decoder, src.baseAddress?.assumingMemoryBound(to: UInt8.self), src.count)
                guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else { return 0 }
                var lastRow: Int32 = 0
                guard WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil else { return 0 }
                return lastRow
            }
        }
        guard rows > 0 else { return nil }
        let isOpaque = PixelOperations.premultiply(&pixels)
        return Image(format: .webp, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: isOpaque, scale: options.scale)
            .fittingThumbnail(options)
    }
}
