public import Foundation

extension JPEGCoder: ProgressiveImageDecoding {
    public func canDecodeProgressively(_ format: ImageFormat) -> Bool { format == .jpeg }

    /// A ``JPEGIncrementalDecoder``: one libjpeg decoder with a suspending source for the whole download.
    public func makeIncrementalDecoder(for format: ImageFormat, options: ImageDecodingOptions) -> (any IncrementalImageDecoding)? {
        format == .jpeg ? JPEGIncrementalDecoder(options: options) : nil
    }

    /// The image libjpeg-turbo makes of a file that ends early: for a progressive JPEG every
    /// scan so far (a blurry whole image), for a baseline one the rows so far (the rest grey),
    /// decoded from scratch. A download uses ``makeIncrementalDecoder(for:options:)`` instead.
    ///
    /// ```swift
    /// let preview = JPEGCoder().decodePartial(firstBytes, options: .default)
    /// ```
    public func decodePartial(_ data: Data, options: ImageDecodingOptions) -> Image? {
        try? Self.decode(Self.completeScans(data), options: options, acceptTruncation: true)
    }

    /// A progressive JPEG cut before its last, unfinished scan and closed with EOI, so libjpeg
    /// never parses a half-received scan header; a single-scan JPEG as it is.
    static func completeScans(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        // In entropy-coded data 0xFF is followed by 0x00 or RSTn, so FF DA is always a real SOS.
        var scans: [Int] = []
        for i in 0..<max(bytes.count - 1, 0) where bytes[i] == 0xFF && bytes[i + 1] == 0xDA { scans.append(i) }
        guard scans.count >= 2, let last = scans.last else { return data }
        return Data(bytes[..<last] + [0xFF, 0xD9])
    }
}
