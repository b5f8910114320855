public import Foundation

/// Decoders that can show something before the whole file has arrived.
///
/// A progressive JPEG shows a blurry whole image after its first scans, a baseline JPEG or a
/// WebP its top rows, an interlaced PNG a blocky whole image after its first Adam7 passes.
/// Implementations decode the prefix they are given from scratch (no state between calls, as
/// Nuke and SDWebImage do); ``ProgressiveDecoder`` feeds them chunks and throttles.
///
/// ```swift
/// var progressive = ProgressiveDecoder(decoder: JPEGCoder())
/// for try await chunk in body {
///     if let preview = progressive.append(chunk) { show(preview) }
/// }
/// ```
public protocol ProgressiveImageDecoding: Sendable {
    /// Whether partial `format` data can give a partial image.
    func canDecodeProgressively(_ format: ImageFormat) -> Bool
    /// A partial image (full size, undecoded parts transparent or filled) from the first bytes
    /// of a file, or `nil` when they are not enough yet. Never throws: partial data is expected.
    func decodePartial(_ data: Data, options: ImageDecodingOptions) -> Image?
}

/// Collects the chunks of one download and asks a ``ProgressiveImageDecoding`` for a partial
/// image at most once per ``minimumInterval`` (Nuke's default: 0.5 s).
public struct ProgressiveDecoder: Sendable {
    public let decoder: any ProgressiveImageDecoding
    public var options: ImageDecodingOptions
    /// The shortest time between two partial images.
    public var minimumInterval: Duration
    /// The bytes received so far.
    public private(set) var data = Data()
    private var lastDecode: ContinuousClock.Instant?
    private var lastDecodedCount = 0

    public init(
        decoder: any ProgressiveImageDecoding, options: ImageDecodingOptions = .default,
        minimumInterval: Duration = .milliseconds(500)
    ) {
        self.decoder = decoder
        self.options = options
        self.minimumInterval = minimumInterval
    }

    /// Replaces the bytes with a longer prefix of the same file (a downloader reports the whole
    /// prefix each time); returns a new partial image as ``append(_:now:)`` does.
    public mutating func update(with prefix: Data, now: ContinuousClock.Instant = .now) -> Image? {
        guard prefix.count > data.count else { return nil }
        return append(prefix.suffix(from: prefix.startIndex + data.count), now: now)
    }

    /// Adds a chunk; returns a new partial image when the interval has passed since the last
    /// one, the data has grown and the decoder has something to show.
    public mutating func append(_ chunk: Data, now: ContinuousClock.Instant = .now) -> Image? {
        data.append(chunk)
        if let lastDecode, now - lastDecode < minimumInterval { return nil }
        guard data.count > lastDecodedCount, let format = ImageFormat(sniffing: data),
              decoder.canDecodeProgressively(format) else { return nil }
        guard let image = decoder.decodePartial(data, options: options) else { return nil }
        lastDecode = now
        lastDecodedCount = data.count
        return image
    }
}

extension ImageCoderRegistry: ProgressiveImageDecoding {
    /// Whether one of the registry's decoders can show `format` progressively.
    public func canDecodeProgressively(_ format: ImageFormat) -> Bool {
        decoders.contains { ($0 as? any ProgressiveImageDecoding)?.canDecodeProgressively(format) == true }
    }

    /// A partial image from the first decoder that decodes the sniffed format progressively.
    public func decodePartial(_ data: Data, options: ImageDecodingOptions) -> Image? {
        guard let format = ImageFormat(sniffing: data) else { return nil }
        for case let decoder as any ProgressiveImageDecoding in decoders where decoder.canDecodeProgressively(format) {
            return decoder.decodePartial(data, options: options)
        }
        return nil
    }
}
