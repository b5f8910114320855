public import Foundation

/// An image container format, recognised from the first bytes of the data.
///
/// Sniffing is table-driven (``ImageFormat/signatures``) and never trusts a file name
/// or a `Content-Type` header:
///
/// ```swift
/// let format = ImageFormat(sniffing: data)   // .jpeg, .png, … or nil
/// print(format?.mimeType ?? "unknown")
/// ```
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, Codable {
    case jpeg, png, gif, webp, tiff, bmp, ico, heic, heif, avif, jpegXL = "jxl", svg, pdf
    /// Animated PNG: a PNG with an `acTL` chunk before its image data (sniffed apart from ``png``).
    case apng

    /// The registered MIME type, as used in `Accept` and `Content-Type` headers.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .tiff: "image/tiff"
        case .bmp: "image/bmp"
        case .ico: "image/x-icon"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .avif: "image/avif"
        case .jpegXL: "image/jxl"
        case .svg: "image/svg+xml"
        case .pdf: "application/pdf"
        case .apng: "image/apng"
        }
    }

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .jpegXL: "jxl"
        default: rawValue
        }
    }

    /// Recognises the format of `data` from its first bytes, or returns `nil`.
    public init?(sniffing data: some DataProtocol) {
        let head = Array(data.prefix(64))
        if let named = ISOBrands.format(head: head) { self = named; return }  // mif1 + compatible avif/heic
        guard let match = ImageFormat.signatures.first(where: { $0.matches(head) }) else {
            // SVG is text: look for the root element in the first kilobyte.
            if ImageFormat.looksLikeSVG(data) { self = .svg; return }
            return nil
        }
        self = match.format == .png && ImageFormat.hasAnimationControl(data) ? .apng : match.format
    }

    /// Maps a file extension (`"jpeg"`, `"JPG"`, `"webp"`, …) to a format.
    public init?(fileExtension ext: String) {
        switch ext.lowercased() {
        case "jpg", "jpeg", "jpe", "jfif": self = .jpeg
        case "tif": self = .tiff
        case "cur": self = .ico
        default:
            guard let format = ImageFormat(rawValue: ext.lowercased()) else { return nil }
            self = format
        }
    }

    /// SVG is text: after optional whitespace and a UTF-8 byte-order mark the data starts with
    /// `<` and names an `<svg` element in its first kilobyte. Works on bytes (no string decode),
    /// so binary data is rejected at its first byte.
    private static func looksLikeSVG(_ data: some DataProtocol) -> Bool {
        let head = Array(data.prefix(1024))
        var index = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        while index < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[index]) { index += 1 }
        guard index < head.count, head[index] == UInt8(ascii: "<") else { return false }
        let needle = Array("<svg".utf8)
        guard head.count - needle.count >= index else { return false }
        return (index...(head.count - needle.count)).contains { head[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

extension ImageFormat: CustomStringConvertible {
    public var description: String { rawValue }
}
