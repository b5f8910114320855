/// What decoding does with a file's colour profile (``ImageDecodingOptions/colorHandling``).
///
/// ```swift
/// var options = ImageDecodingOptions.default
/// options.colorHandling = .keep        // pixels as stored, the profile travels with the image
/// let image = try ImageCoderRegistry.default.decode(data, options: options)
/// let png = try ImageCoderRegistry.default.encode(image, as: .png)  // embeds the profile
/// ```
public enum ColorHandling: String, Sendable, Hashable, Codable, CaseIterable {
    /// Convert pixels to sRGB with LittleCMS (the default, as browsers, ImageIO, libvips and
    /// imgproxy show images); untagged and sRGB-tagged images are left as they are. Encoders
    /// then write untagged sRGB.
    case convertToSRGB = "srgb"
    /// Leave pixels as stored and keep the profile in ``Image/colorProfile``; encoders embed it
    /// (JPEG, PNG, WebP, AVIF, TIFF). CMYK JPEGs are the exception: their inks become RGB in
    /// any case, so with a CMYK profile they are converted through it to sRGB (untagged), as
    /// under ``convertToSRGB``.
    case keep
    /// Leave pixels as stored and forget the profile (how WebImage behaved before it managed
    /// colour; the output looks wrong for anything but sRGB).
    case ignore
}
