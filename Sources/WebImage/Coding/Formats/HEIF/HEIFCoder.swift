internal import CHeif
public import Foundation

/// HEIC / HEIF decoding and HEIC encoding over libheif (libde265 decodes HEVC, x265 encodes it;
/// a HEIF file holding AV1 decodes through libheif's dav1d or libaom plug-in).
///
/// The primary image is decoded. The container is parsed first (`ispe`: size and alpha, without
/// decoding), so the pixel limit is checked before any pixel buffer exists; libheif also
/// refuses any item (grid tiles included) over 32768 pixels a side while parsing, a typed
/// ``ImageDecodingError/corrupt(format:reason:)``. The geometric transformations the
/// file stores (`irot`, `imir`, `clap`) are **applied** (HEIF's rules make them, not EXIF,
/// authoritative), so ``Image/orientation`` is always 1. Alpha (an auxiliary image) is
/// premultiplied unless the file says it already is. Image sequences (`hevc`/`msf1` brands) are
/// not supported by libheif 1.15 and give ``ImageDecodingError/corrupt(format:reason:)``.
/// Encoding is lossy HEVC (x265) at `quality` 0…1; translucent images keep alpha.
///
/// ```swift
/// let image = try HEIFCoder().decode(data, options: .default)
/// let heic = try HEIFCoder().encode(image, as: .heic, quality: 0.8)
/// ```
public struct HEIFCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .heic || format == .heif }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .heic }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.withPrimaryImage(data) { handle, format throws(ImageDecodingError) in try Self.header(handle, format) }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try Self.withPrimaryImage(data) { handle, format throws(ImageDecodingError) in
            let header = try Self.header(handle, format)
            try options.checkPixelLimit(header)
            // 10- and 12-bit images whose profile converts decode at 16 bits (premultiplied
            // ones are un-premultiplied at 16 bits before converting).
            let premultiplied = header.hasAlpha && heif_image_handle_is_premultiplied_alpha(handle) != 0
            let wide = WideColorConversion.planned(
                width: header.pixelWidth, height: header.pixelHeight,
                bitDepth: Int(heif_image_handle_get_luma_bits_per_pixel(handle)), options: options
            ) { EmbeddedColor.read(from: data, format: format) }
            let decodingOptions = heif_decoding_options_alloc()
            defer { heif_decoding_options_free(decodingOptions) }
            decodingOptions?.pointee.convert_hdr_to_8bit = wide == nil ? 1 : 0
            let chroma = wide == nil ? heif_chroma_interleaved_RGBA
                : header.hasAlpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE
            var decoded: OpaquePointer?
            try Self.check(heif_decode_image(handle, &decoded, heif_colorspace_RGB, chroma, decodingOptions), format)
            guard let decoded else { throw .corrupt(format: format, reason: "no image decoded") }
            defer { heif_image_release(decoded) }
            let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
            let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
            // A crop (`clap`) may shrink the image; nothing may grow past what the limit allowed.
            guard width > 0, height > 0, width * height <= header.pixelWidth * header.pixelHeight else {
                throw .corrupt(format: format, reason: "decoded size differs from the header")
            }
            var pixels: [UInt8]
            if let wide {
                pixels = try Self.convertedRGBA(
                    decoded, width: width, height: height, format: format, opaque: !header.hasAlpha, premultiplied: premultiplied, wide)
            } else {
                pixels = try Self.packedRGBA(decoded, width: width, height: height, format: format)
            }
            let isOpaque: Bool
            if !header.hasAlpha {
                isOpaque = true
            } else if premultiplied, wide == nil {
                isOpaque = PixelOperations.isOpaque(pixels)
            } else {
                isOpaque = try PixelOperations.premultiplyStoppable(&pixels)
            }
            var image = Image(
                format: format, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: isOpaque,
                scale: options.scale
            ).fittingThumbnail(options)
            image.sourceColorProfile = wide?.profile  // converted already: applyColor leaves it
            return image
        }
    }

    // MARK: - Internals

    /// libheif's one-time set-up (its decoder and encoder plug-ins); reference counted by libheif.
    static let initialized: Bool = heif_init(nil).code == heif_error_Ok

    /// The parsed primary image of `data`, which stays pinned while `body` runs.
    static func withPrimaryImage<T>(
        _ data: Data, _ body: (OpaquePointer, ImageFormat) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        let sniffed = ImageFormat(sniffing: data)
        let format = sniffed == .heif || sniffed == .avif ? sniffed! : .heic
        try CodecLibrary.heif.checkDecoding(format)
        guard initialized, let context = heif_context_alloc() else { throw .corrupt(format: format, reason: "cannot create decoder") }
        defer { heif_context_free(context) }
        heif_context_set_max_decoding_threads(context, 1)  // one core per decode, as the other coders
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                try ISOItemLimit.check(raw, format: format)
                try ISOCodedItemCheck.check(raw, meta: ISOMeta(raw), format: format, throughLibheif: true)
                try check(heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil), format)
                var handle: OpaquePointer?
                try check(heif_context_get_primary_image_handle(context, &handle), format)
                guard let handle else { throw .corrupt(format: format, reason: "no primary image") }
                defer { heif_image_handle_release(handle) }
                return .success(try body(handle, format))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func header(_ handle: OpaquePointer, _ format: ImageFormat) throws(ImageDecodingError) -> ImageHeader {
        let width = Int(heif_image_handle_get_width(handle)), height = Int(heif_image_handle_get_height(handle))
        guard width > 0, height > 0 else { throw .corrupt(format: format, reason: "zero image size") }
        return ImageHeader(
            format: format, pixelWidth: width, pixelHeight: height, hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0)
    }

    /// The decoded image's interleaved RGBA plane, rows packed (libheif may pad its rows).
    private static func packedRGBA(
        _ image: OpaquePointer, width: Int, height: Int, format: ImageFormat
    ) throws(ImageDecodingError) -> [UInt8] {
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride), Int(stride) >= width * 4 else {
            throw .corrupt(format: format, reason: "no RGBA plane")
        }
        let rowBytes = width * 4
        return [UInt8](unsafeUninitializedCapacity: rowBytes * height) { out, count in
            for y in 0..<height {
                (out.baseAddress! + y * rowBytes).update(from: plane + y * Int(stride), count: rowBytes)
            }
            count = rowBytes * height
        }
    }

    static func check(_ error: heif_error, _ format: ImageFormat) throws(ImageDecodingError) {
        guard error.code != heif_error_Ok else { return }
        throw .corrupt(format: format, reason: reason(error))
    }

    static func checkEncoding(_ error: heif_error, _ format: ImageFormat) throws(ImageEncodingError) {
        guard error.code != heif_error_Ok else { return }
        throw .encodingFailed(format: format, reason: reason(error))
    }

    private static func reason(_ error: heif_error) -> String {
        error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)"
    }
}
