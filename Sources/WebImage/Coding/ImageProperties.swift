public import Foundation

/// What a file says about its pixels beyond size and frame count, read from headers only (no
/// pixel decoding, so it works on images over the pixel limit): colour model, bit depth,
/// embedded ICC profile, EXIF orientation and loop count. Fields a format does not state, or
/// this reader does not parse, are `nil`.
///
/// ```swift
/// let properties = ImageProperties.read(from: data)
/// print(properties?.colorModel ?? .rgb, properties?.bitDepth ?? 8, properties?.hasICCProfile == true)
/// print(properties?.colorProfile?.description ?? "untagged")  // "Display P3 (nclx 12/13)"
/// ```
public struct ImageProperties: Sendable, Equatable {
    /// How the file stores colour (not what it decodes to: every image decodes to RGBA8).
    public enum ColorModel: String, Sendable, Codable, CaseIterable {
        case gray, grayAlpha = "gray-alpha", rgb, rgba, indexed, cmyk
    }

    public var header: ImageHeader
    public var colorModel: ColorModel?
    /// Bits per sample as stored (1–16; 8 for palette files' entries).
    public var bitDepth: Int?
    public var hasICCProfile: Bool?
    /// The colour space the file states: its embedded ICC profile, or the profile built from the
    /// numbers it gives instead (AVIF/HEIF `nclx`, PNG `gAMA` + `cHRM`, BMP calibrated RGB);
    /// `nil` for untagged and sRGB files, and for a damaged profile.
    public var colorProfile: ColorProfile?
    /// EXIF orientation (or TIFF's / JPEG XL's own).
    public var orientation: ImageOrientation
    /// Animation plays (0 = forever); `nil` for stills and formats that do not say.
    public var loopCount: Int?

    public init(
        header: ImageHeader, colorModel: ColorModel? = nil, bitDepth: Int? = nil, hasICCProfile: Bool? = nil,
        orientation: ImageOrientation = .up, loopCount: Int? = nil, colorProfile: ColorProfile? = nil
    ) {
        self.colorProfile = colorProfile
        self.header = header
        self.colorModel = colorModel
        self.bitDepth = bitDepth
        self.hasICCProfile = hasICCProfile
        self.orientation = orientation
        self.loopCount = loopCount
    }

    /// Reads the header with `coders` and the format's metadata; throws what the header read throws.
    public static func read(from data: Data, coders: ImageCoderRegistry = .default) throws(ImageDecodingError) -> ImageProperties {
        let header = try coders.readHeader(data)
        var properties = ImageProperties(header: header)
        switch header.format {
        case .jpeg: properties.readJPEG(data)
        case .png, .apng:
            properties.readPNG(data)
            // A PNG whose animation is broken shows its still image: no loop count then.
            if header.frameCount < 2 { properties.loopCount = nil }
        case .gif: properties.readGIF(data)
        case .webp: properties.readWebP(data)
        case .tiff: if let tiff = try? TIFFCoder.properties(data) { properties = tiff }
        case .jpegXL: if let jxl = try? JXLCoder.properties(data) { properties = jxl }
        case .bmp: properties.readBMP(data)
        case .ico: properties.readICO(data)
        default: properties.colorModel = header.hasAlpha ? .rgba : .rgb
        }
        let color = EmbeddedColor.read(from: data, format: header.format)
        properties.colorProfile = color.profile
        if color.isDamaged || (color.profile != nil && properties.hasICCProfile == nil) { properties.hasICCProfile = true }
        return properties
    }
}

extension ImageProperties {
    /// Only the orientation of `data`, whose format a header read already gave: what
    /// ``read(from:coders:)`` says of it, without a second header read or the colour profile.
    /// A server that sizes its decode for the upright picture asks this before decoding.
    ///
    /// ```swift
    /// let header = try ImageCoderRegistry.default.readHeader(data)
    /// let turned = ImageProperties.orientation(of: data, format: header.format).swapsWidthAndHeight
    /// ```
    public static func orientation(of data: Data, format: ImageFormat) -> ImageOrientation {
        switch format {
        case .jpeg: EXIFOrientation.read(fromJPEG: data)
        case .png, .apng: EXIFOrientation.read(fromPNG: data)
        case .webp: EXIFOrientation.read(fromWebP: data)
        case .tiff: (try? TIFFCoder.properties(data))?.orientation ?? .up
        case .jpegXL: (try? JXLCoder.properties(data))?.orientation ?? .up
        default: .up
        }
    }
}
