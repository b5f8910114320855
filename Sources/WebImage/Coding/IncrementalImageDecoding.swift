public import Foundation

/// The decoder of one download that keeps its codec state between chunks: each chunk is
/// decoded once, where a ``ProgressiveImageDecoding/decodePartial(_:options:)`` call decodes
/// the whole prefix again, so the cost of a chunk stays the same however much has arrived.
///
/// A coder makes one per download with
/// ``ProgressiveImageDecoding/makeIncrementalDecoder(for:options:)``; ``ProgressiveDecoder``
/// uses it when the coder has one (WebP, JPEG and PNG: ``WebPIncrementalDecoder``,
/// ``JPEGIncrementalDecoder``, ``PNGIncrementalDecoder``) and decodes prefixes
/// otherwise. The partial images are the ones the prefix decode gives for the same bytes.
///
/// ```swift
/// if let incremental = WebPCoder().makeIncrementalDecoder(for: .webp, options: .default) {
///     for try await chunk in body {
///         incremental.append(chunk)
///         if let preview = incremental.partialImage() { show(preview) }
///     }
/// }
/// ```
public protocol IncrementalImageDecoding: Sendable {
    /// Decodes what `chunk`, the next bytes of the file, makes decodable. Never throws: data that
    /// does not decode (or an image over the pixel limit) just gives no more partial images.
    func append(_ chunk: Data)
    /// The picture as decoded so far (undecoded parts transparent), or `nil` while there is
    /// nothing to show or the data turned out undecodable.
    func partialImage() -> Image?
}

extension ProgressiveImageDecoding {
    /// `nil`: this decoder has no incremental path; its prefixes are decoded from scratch.
    public func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions) -> (any IncrementalImageDecoding)? {
        nil
    }
}
