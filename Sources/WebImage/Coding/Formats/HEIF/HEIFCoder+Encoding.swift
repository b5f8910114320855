internal import CHeif
public import Foundation

extension HEIFCoder {
    /// Encodes `image` as lossy HEIC (HEVC through x265) at `quality` 0…1; a translucent image
    /// keeps its alpha (un-premultiplied, as HEIF stores it).
    ///
    /// ```swift
    /// let heic = try HEIFCoder().encode(image, as: .heic, quality: 0.8)
    /// ```
    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        // libheif takes sides as `int`.
        try image.checkEncodable(as: format, maxSide: Int(Int32.max))
        let unitQuality = try EncodingQuality.unit(quality, format: .heic)
        try CodecLibrary.heif.checkEncoding(.heic)
        guard Self.initialized, let context = heif_context_alloc() else {
            throw .encodingFailed(format: .heic, reason: "cannot create encoder")
        }
        defer { heif_context_free(context) }
        var encoder: OpaquePointer?
        try Self.checkEncoding(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder), .heic)
        guard let encoder else { throw .encodingFailed(format: .heic, reason: "no HEVC encoder") }
        defer { heif_encoder_release(encoder) }
        heif_encoder_set_logging_level(encoder, 0)  // x265 would print its settings to stderr
        try Self.checkEncoding(
            heif_encoder_set_lossy_quality(encoder, Int32((unitQuality * 100).rounded())), .heic)
        let source = try Self.heifImage(image)
        defer { heif_image_release(source) }
        try Self.checkEncoding(heif_context_encode_image(context, source, encoder, nil, nil), .heic)
        let output = Output()
        let unmanaged = Unmanaged.passRetained(output)
        defer { unmanaged.release() }
        var writer = heif_writer(writer_api_version: 1, write: Self.write)
        try Self.checkEncoding(heif_context_write(context, &writer, unmanaged.toOpaque()), .heic)
        return output.data
    }

    // MARK: - Internals

    /// Collects what libheif writes.
    private final class Output {
        var data = Data()
    }

    private static let write: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> heif_error = {
        _, bytes, count, user in
        if let bytes, let user {
            Unmanaged<Output>.fromOpaque(user).takeUnretainedValue().data.append(bytes.assumingMemoryBound(to: UInt8.self), count: count)
        }
        // A static C string: libheif may read `message` after the call returns.
        let message = UnsafeRawPointer(("Success" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
        return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: message)
    }

    /// A libheif image of `image`'s straight colours: interleaved RGB when opaque, else RGBA.
    private static func heifImage(_ image: Image) throws(ImageEncodingError) -> OpaquePointer {
        let width = image.pixelWidth, height = image.pixelHeight
        let channels = image.isOpaque ? 3 : 4
        let rows = image.isOpaque ? try PixelOperations.dropAlphaStoppable(image) : try PixelOperations.unpremultipliedStoppable(image)
        var created: OpaquePointer?
        let chroma = image.isOpaque ? heif_chroma_interleaved_RGB : heif_chroma_interleaved_RGBA
        try checkEncoding(heif_image_create(Int32(width), Int32(height), heif_colorspace_RGB, chroma, &created), .heic)
        guard let created else { throw .encodingFailed(format: .heic, reason: "cannot create image") }
        do throws(ImageEncodingError) {
            try checkEncoding(heif_image_add_plane(created, heif_channel_interleaved, Int32(width), Int32(height), 8), .heic)
            var stride: Int32 = 0
            guard let plane = heif_image_get_plane(created, heif_channel_interleaved, &stride) else {
                throw .encodingFailed(format: .heic, reason: "no image plane")
            }
            rows.withUnsafeBufferPointer { src in
                for y in 0..<height {
                    (plane + y * Int(stride)).update(from: src.baseAddress! + y * width * channels, count: width * channels)
                }
            }
            return created
        } catch {
            heif_image_release(created)
            throw error
        }
    }
}
