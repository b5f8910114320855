/// What a lenient decode forgave in a file that breaks its format's rules, the way browsers and
/// mainstream decoders forgive it. Empty for a well-formed file.
///
/// By default WebImage decodes such files (``Image/repairs`` says what was wrong); with
/// ``ImageDecodingOptions/strict`` each of them is refused with
/// ``ImageDecodingError/refusedInStrictMode(format:repairs:reason:)``.
///
/// ```swift
/// let image = try ImageCoderRegistry.default.decode(data)
/// if image.isPartial { showRetryBadge() }                // the file ended early
/// print(image.repairs.names)                             // ["truncated"]
/// ```
public struct ImageRepairs: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The data ended early: the image holds what was decoded (JPEG: libjpeg fills the rest
    /// grey; PNG: the missing rows are transparent; GIF: frames after the break are missing).
    public static let truncated = ImageRepairs(rawValue: 1 << 0)
    /// Bytes that are not a marker where one belongs were skipped (JPEG junk before markers).
    public static let junkBytes = ImageRepairs(rawValue: 1 << 1)
    /// Malformed metadata was ignored: a short or cut APPn segment, an unreadable EXIF block,
    /// JFIF density oddities, an ancillary PNG chunk with a bad CRC.
    public static let damagedMetadata = ImageRepairs(rawValue: 1 << 2)
    /// Compressed data was damaged (a bad LZW code, a corrupt Huffman code): what decoded is kept.
    public static let damagedData = ImageRepairs(rawValue: 1 << 3)
    /// Frames reached outside the canvas (clipped), or the canvas was empty (grown to the frames).
    public static let canvasMismatch = ImageRepairs(rawValue: 1 << 4)
    /// The palette did not fit: a transparent index beyond it, or a frame without any palette.
    public static let paletteMismatch = ImageRepairs(rawValue: 1 << 5)
    /// The end-of-file marker (GIF trailer) was missing after complete frames.
    public static let missingTrailer = ImageRepairs(rawValue: 1 << 6)
    /// A coding parameter was beyond the format's range, within what browsers accept: a GIF
    /// frame's LZW minimum code size of 9–11 (GIF allows 2–8; the codes still fit LZW's 12 bits).
    public static let codingBeyondSpec = ImageRepairs(rawValue: 1 << 7)

    /// Stable names for tools and JSON (`webimage info`).
    public var names: [String] {
        let all: [(ImageRepairs, String)] = [
            (.truncated, "truncated"), (.junkBytes, "junk-bytes"), (.damagedMetadata, "damaged-metadata"),
            (.damagedData, "damaged-data"), (.canvasMismatch, "canvas-mismatch"), (.paletteMismatch, "palette-mismatch"),
            (.missingTrailer, "missing-trailer"), (.codingBeyondSpec, "coding-beyond-spec"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

extension ImageDecodingOptions {
    /// Accepts `repairs` (returns them) unless ``strict`` is set, where it throws instead.
    func allow(_ repairs: ImageRepairs, in format: ImageFormat, _ reason: @autoclosure () -> String) throws(ImageDecodingError) -> ImageRepairs {
        guard strict, !repairs.isEmpty else { return repairs }
        throw .refusedInStrictMode(format: format, repairs: repairs, reason: reason())
    }
}
