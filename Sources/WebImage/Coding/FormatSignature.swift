/// One row of the sniffing table: bytes that must appear at an offset.
///
/// A signature matches when every one of its `parts` matches; `nil` bytes in a part are
/// wildcards. The table is ordered: the first matching row wins.
public struct FormatSignature: Sendable {
    public struct Part: Sendable {
        public var offset: Int
        public var bytes: [UInt8?]

        public init(offset: Int, _ bytes: [UInt8?]) {
            self.offset = offset
            self.bytes = bytes
        }

        public init(offset: Int, ascii: String) {
            self.init(offset: offset, Array(ascii.utf8).map { Optional($0) })
        }

        func matches(_ head: [UInt8]) -> Bool {
            guard head.count >= offset + bytes.count else { return false }
            for (index, expected) in bytes.enumerated() {
                if let expected, head[offset + index] != expected { return false }
            }
            return true
        }
    }

    public var format: ImageFormat
    public var parts: [Part]

    public init(_ format: ImageFormat, _ parts: Part...) {
        self.format = format
        self.parts = parts
    }

    public func matches(_ head: [UInt8]) -> Bool {
        parts.allSatisfy { $0.matches(head) }
    }
}

extension ImageFormat {
    /// The sniffing table, in the order it is consulted.
    ///
    /// HEIF-family files start with an ISO-BMFF `ftyp` box; the major brand at bytes 8–11
    /// tells AVIF (`avif`, `avis`), HEIC (`heic`, `heix`, `hevc`, `hevx`) and HEIF (`mif1`, `msf1`) apart.
    public static let signatures: [FormatSignature] = {
        typealias P = FormatSignature.Part
        let ftyp = P(offset: 4, ascii: "ftyp")
        func brand(_ b: String) -> P { P(offset: 8, ascii: b) }
        return [
            FormatSignature(.jpeg, P(offset: 0, [0xFF, 0xD8, 0xFF])),
            FormatSignature(.png, P(offset: 0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])),
            FormatSignature(.gif, P(offset: 0, ascii: "GIF87a")),
            FormatSignature(.gif, P(offset: 0, ascii: "GIF89a")),
            FormatSignature(.webp, P(offset: 0, ascii: "RIFF"), P(offset: 8, ascii: "WEBP")),
            FormatSignature(.tiff, P(offset: 0, [0x49, 0x49, 0x2A, 0x00])),
            FormatSignature(.tiff, P(offset: 0, [0x4D, 0x4D, 0x00, 0x2A])),
            FormatSignature(.tiff, P(offset: 0, [0x49, 0x49, 0x2B, 0x00])),  // BigTIFF (libtiff reads it)
            FormatSignature(.tiff, P(offset: 0, [0x4D, 0x4D, 0x00, 0x2B])),
            FormatSignature(.avif, ftyp, brand("avif")),
            FormatSignature(.avif, ftyp, brand("avis")),
            FormatSignature(.heic, ftyp, brand("heic")),
            FormatSignature(.heic, ftyp, brand("heix")),
            FormatSignature(.heic, ftyp, brand("hevc")),
            FormatSignature(.heic, ftyp, brand("hevx")),
            FormatSignature(.heif, ftyp, brand("mif1")),
            FormatSignature(.heif, ftyp, brand("msf1")),
            FormatSignature(.jpegXL, P(offset: 0, [0xFF, 0x0A])),
            FormatSignature(.jpegXL, P(offset: 0, [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])),
            FormatSignature(.pdf, P(offset: 0, ascii: "%PDF")),
            FormatSignature(.bmp, P(offset: 0, ascii: "BM")),
            FormatSignature(.ico, P(offset: 0, [0x00, 0x00, 0x01, 0x00])),
            FormatSignature(.ico, P(offset: 0, [0x00, 0x00, 0x02, 0x00])),
        ]
    }()
}
