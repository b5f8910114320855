internal import CSpng
import Foundation

/// 16-bit PNGs with a profile that is converted to sRGB: the pixels are decoded to RGBA16,
/// converted by a 16-bit LittleCMS transform and only then rounded to 8 bits, so a smooth
/// wide-gamut gradient keeps its steps (converting after the narrowing merges neighbouring
/// levels where the profile's curve is steeper than sRGB's: banding). libvips converts the same
/// way; Pillow narrows first.
extension PNGCoder {
    struct WideColor {
        var profile: ColorProfile
        var transform: ColorTransform
    }

    /// Above this many pixels the RGBA16 buffer (8 bytes a pixel, beside the RGBA8 result) is not
    /// worth its memory: larger files convert after the 8-bit decode, as before.
    static let maxWidePixels = 16 << 20

    /// The 16-bit conversion for this file, or `nil` when the usual 8-bit path applies (8-bit
    /// samples, another colour handling, untagged or sRGB files, grey or unusable profiles, more
    /// than ``maxWidePixels`` pixels, or a decoded-bytes budget the RGBA16 buffer would exceed).
    static func wideColorConversion(_ ctx: OpaquePointer, data: Data, options: ImageDecodingOptions) -> WideColor? {
        var ihdr = spng_ihdr()
        guard options.colorHandling == .convertToSRGB, spng_get_ihdr(ctx, &ihdr) == 0, ihdr.bit_depth == 16,
              Int(ihdr.width) * Int(ihdr.height) <= maxWidePixels,
              options.maxDecodedBytes.map({ Int(ihdr.width) * Int(ihdr.height) * 12 <= $0 }) ?? true,
              let profile = EmbeddedColor.read(from: data, format: .png).profile,
              profile.colorSpace == .rgb, !profile.isSRGB,
              let transform = ColorTransforms.shared.transform(from: profile, layout: .rgba16)
        else { return nil }
        return WideColor(profile: profile, transform: transform)
    }

    /// Decodes to RGBA16 (twice the bytes of RGBA8, for the length of this call), converts to
    /// sRGB and returns straight-alpha RGBA8, each sample rounded (v × 255 / 65535).
    static func decodeConvertingWide(
        _ ctx: OpaquePointer, header: ImageHeader, transform: ColorTransform
    ) throws(ImageDecodingError) -> [UInt8] {
        let format = Int32(SPNG_FMT_RGBA16.rawValue)
        var size = 0
        try check(spng_decoded_image_size(ctx, format, &size))
        let width = header.pixelWidth, height = header.pixelHeight
        guard size / 8 == width * height else { throw .corrupt(format: .png, reason: "unexpected 16-bit image size") }
        var wide = [UInt16](repeating: 0, count: size / 2)
        let failure: ImageDecodingError? = wide.withUnsafeMutableBytes { out in
            do throws(ImageDecodingError) {
                try decodeRows(ctx, into: out, rowBytes: 8 * width, format: format)  // cancellable, as the 8-bit path
                return nil
            } catch { return error }
        }
        if let failure { throw failure }
        return transform.convertNarrowing(&wide, width: width, height: height)
    }
}
