internal import CSpng
import Foundation

/// 16-bit PNGs whose profile (RGB, or grey for grey files) is converted to sRGB decode to RGBA16
/// and convert before they are narrowed to 8 bits (``WideColorConversion``); libspng writes
/// grey samples as R = G = B.
extension PNGCoder {
    /// The 16-bit conversion for this file, or `nil` when the usual 8-bit path applies (see
    /// ``WideColorConversion/planned(width:height:frames:bitDepth:options:color:)``).
    static func wideColorConversion(_ ctx: OpaquePointer, data: Data, options: ImageDecodingOptions) -> WideColorConversion? {
        var ihdr = spng_ihdr()
        guard spng_get_ihdr(ctx, &ihdr) == 0 else { return nil }
        return WideColorConversion.planned(
            width: Int(ihdr.width), height: Int(ihdr.height), bitDepth: Int(ihdr.bit_depth), options: options
        ) { EmbeddedColor.read(from: data, format: .png) }
    }

    /// Decodes to RGBA16 (twice the bytes of RGBA8, for the length of this call), converts to
    /// sRGB and returns straight-alpha RGBA8.
    static func decodeConvertingWide(
        _ ctx: OpaquePointer, header: ImageHeader, conversion: WideColorConversion
    ) throws(ImageDecodingError) -> [UInt8] {
        let format = Int32(SPNG_FMT_RGBA16.rawValue)
        var size = 0
        try check(spng_decoded_image_size(ctx, format, &size))
        let width = header.pixelWidth, height = header.pixelHeight
        guard size / 8 == width * height else { throw .corrupt(format: .png, reason: "unexpected 16-bit image size") }
        return try conversion.decode(width: width, height: height) { out throws(ImageDecodingError) in
            try decodeRows(ctx, into: out, rowBytes: 8 * width, format: format)  // cancellable, as the 8-bit path
        }
    }
}
