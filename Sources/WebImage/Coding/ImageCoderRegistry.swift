public import Foundation

/// The coders manager: a list of decoders and encoders asked in order, itself a decoder.
///
/// The first decoder that ``ImageDecoding/canDecode(_:)`` the sniffed format wins. Add your
/// own coders in front to override a built-in one:
///
/// ```swift
/// var coders = ImageCoderRegistry.default
/// coders.insert(MyCoder(), at: 0)
/// let image = try coders.decode(data)
/// ```
public struct ImageCoderRegistry: ImageDecoding, Sendable {
    public private(set) var decoders: [any ImageDecoding]
    public private(set) var encoders: [any ImageEncoding]

    public init(decoders: [any ImageDecoding], encoders: [any ImageEncoding]) {
        self.decoders = decoders
        self.encoders = encoders
    }

    /// JPEG (libjpeg-turbo), PNG (libspng), GIF (giflib), WebP (libwebp), AVIF (libavif),
    /// HEIC/HEIF (libheif) and APNG (libspng per frame); decoding only: TIFF (libtiff), JPEG XL
    /// (libjxl), BMP and ICO/CUR (Swift).
    public static let `default` = ImageCoderRegistry(
        decoders: [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder(), AVIFCoder(), HEIFCoder()]
            + [TIFFCoder(), JXLCoder()] + [APNGCoder(), BMPCoder(), ICOCoder()],
        encoders: [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder(), AVIFCoder(), HEIFCoder()]
            + [APNGCoder()]
    )

    /// Puts a decoder at `index` (0 = asked first).
    public mutating func insert(_ decoder: any ImageDecoding, at index: Int = 0) {
        decoders.insert(decoder, at: index)
    }

    /// Puts an encoder at `index` (0 = asked first).
    public mutating func insert(_ encoder: any ImageEncoding, at index: Int = 0) {
        encoders.insert(encoder, at: index)
    }

    public func canDecode(_ format: ImageFormat) -> Bool {
        decoders.contains { $0.canDecode(format) }
    }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try decoder(for: data).readHeader(data)
    }

    public func decode(_ data: Data, options: ImageDecodingOptions = .default) throws(ImageDecodingError) -> Image {
        let decoder = try decoder(for: data)
        // A byte budget becomes a thumbnail size once the header is known.
        let options = options.maxDecodedBytes == nil ? options : options.fittingBudget(of: try decoder.readHeader(data))
        // Built-in coders honour the thumbnail size themselves; this covers custom ones.
        var image = try decoder.decode(data, options: options).fittingThumbnail(options)
        // Colour is converted after any reduction: fewer pixels to convert (as libvips' thumbnail does).
        image.applyColor(EmbeddedColor.read(from: data, format: image.format), handling: options.colorHandling)
        return image
    }

    /// Encodes `image` with the first encoder for `format`.
    public func encode(_ image: Image, as format: ImageFormat, quality: Double = 0.85) throws(ImageEncodingError) -> Data {
        guard let encoder = encoders.first(where: { $0.canEncode(format) }) else {
            throw .unsupportedFormat(format)
        }
        // A kept colour profile (ColorHandling.keep) travels in the file where the format has a
        // place for it; for the others (GIF, HEIC, BMP) the pixels are converted to sRGB first.
        // So is a grey profile: the encoders write RGB samples, and a grey profile in an RGB file
        // is invalid (PNG, JPEG and WebP say so; Chromium ignores it and shows the raw samples).
        guard let profile = image.colorProfile else { return try encoder.encode(image, as: format, quality: quality) }
        guard [.jpeg, .png, .apng, .webp, .avif].contains(format), profile.colorSpace == .rgb else {
            var converted = image
            converted.convertToSRGB(from: profile)
            converted.colorProfile = nil
            return try encoder.encode(converted, as: format, quality: quality)
        }
        let encoded = try encoder.encode(image, as: format, quality: quality)
        return format == .avif ? encoded : ColorProfileEmbedding.embed(profile, in: encoded, format: format, image: image)
    }

    private func decoder(for data: Data) throws(ImageDecodingError) -> any ImageDecoding {
        guard !data.isEmpty else { throw .empty }
        let format = ImageFormat(sniffing: data)
        guard let format, let decoder = decoders.first(where: { $0.canDecode(format) }) else {
            throw .unsupportedFormat(format)
        }
        return decoder
    }
}
