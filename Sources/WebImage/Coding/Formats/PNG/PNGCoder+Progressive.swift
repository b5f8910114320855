public import Foundation

extension PNGCoder: ProgressiveImageDecoding {
    public func canDecodeProgressively(_ format: ImageFormat) -> Bool { format == .png }

    /// A ``PNGIncrementalDecoder``: one libpng progressive reader for the whole download.
    public func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions) -> (any IncrementalImageDecoding)? {
        format == .png ? PNGIncrementalDecoder(options: options) : nil
    }

    /// The rows the first bytes of a PNG give: a ``PNGIncrementalDecoder``'s image after the
    /// prefix at once, decoded from scratch. Interlaced images fill each Adam7 pixel's block
    /// (8×8 after the first pass, down to 1×1), so the whole picture appears coarse first and
    /// sharpens; plain ones show their top rows, every row whose bytes are in (libspng, which
    /// decodes the full image, would use only whole IDAT chunks). A download uses
    /// ``makeIncrementalDecoder(for:options:)`` instead.
    ///
    /// ```swift
    /// let preview = PNGCoder().decodePartial(firstBytes, options: .default)
    /// ```
    public func decodePartial(_ data: Data, options: ImageDecodingOptions) -> Image? {
        let state = PNGIncrementalDecoder.State(options: options)
        state.append(data, options: options)
        return state.partialImage(options: options)
    }
}
