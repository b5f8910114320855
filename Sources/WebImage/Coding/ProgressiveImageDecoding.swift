public import Foundation

/// Decoders that can show something before the whole file has arrived.
///
/// A progressive JPEG shows a blurry whole image after its first scans, a baseline JPEG or a
/// WebP its top rows, an interlaced PNG a blocky whole image after its first Adam7 passes.
/// ``decodePartial(_:options:)`` decodes the prefix it is given from scratch (no state between
/// calls, as Nuke and SDWebImage do); a coder whose library can keep its state between chunks
/// also makes an ``IncrementalImageDecoding`` per download. ``ProgressiveDecoder`` feeds chunks
/// to whichever the coder has, and throttles.
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
    /// A decoder for one download of `format` that keeps its state between chunks, or `nil`
    /// (the default) when partial images come from ``decodePartial(_:options:)`` only.
    func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions) -> (any IncrementalImageDecoding)?
}

/// Collects the chunks of one download and asks a ``ProgressiveImageDecoding`` for a partial
/// image at most once per ``minimumInterval`` (Nuke's default: 0.5 s).
///
/// When the coder makes an ``IncrementalImageDecoding`` for the sniffed format, every chunk goes
/// to it as it arrives (so its state follows the download) and only the partial image waits for
/// the interval; otherwise the whole prefix is decoded at each interval. A copy of a
/// `ProgressiveDecoder` shares its incremental decoder: keep one per download.
public struct ProgressiveDecoder: Sendable {
    public let decoder: any ProgressiveImageDecoding
    public var options: ImageDecodingOptions
    /// The shortest time between two partial images.
    public var minimumInterval: Duration
    /// The bytes received so far.
    public private(set) var data = Data()
    private var lastDecode: ContinuousClock.Instant?
    private var lastDecodedCount = 0
    private var path = Path.undecided

    /// How partial images are made, decided once the format is known.
    private enum Path {
        case undecided
        case prefix
        case incremental(any IncrementalImageDecoding)
    }

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
        switch path {
        case .incremental(let incremental):
            incremental.append(chunk)
        case .undecided:
            guard let format = ImageFormat(sniffing: data), decoder.canDecodeProgressively(format) else { break }
            if let incremental = decoder.makeIncrementalDecoder(for: format, options: options) {
                incremental.append(data)
                path = .incremental(incremental)
            } else {
                path = .prefix
            }
        case .prefix:
            break
        }
        if let lastDecode, now - lastDecode < minimumInterval { return nil }
        guard data.count > lastDecodedCount, let format = ImageFormat(sniffing: data),
              decoder.canDecodeProgressively(format) else { return nil }
        let partial = if case .incremental(let incremental) = path { incremental.partialImage() } else {
            decoder.decodePartial(data, options: options)
        }
        guard let image = partial else { return nil }
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

    /// The incremental decoder of the first decoder that decodes `format` progressively, if it has one.
    public func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions) -> (any IncrementalImageDecoding)? {
        for case let decoder as any ProgressiveImageDecoding in decoders where decoder.canDecodeProgressively(format) {
            return decoder.makeIncrementalDecoder(for: format, options: options)
        }
        return nil
    }
}
