import Foundation

/// What a file says about its colour, read from its container before (or beside) decoding:
/// an ICC profile (embedded, or built from the numbers the format states instead), or nothing
/// (untagged: treated as sRGB, as browsers do).
struct EmbeddedColor: Sendable {
    /// The profile, when the file carries one LittleCMS can use.
    var profile: ColorProfile?
    /// The file carried colour information that could not be used (a profile split over JPEG
    /// markers with parts missing, a PNG `iCCP` that does not inflate, bytes LittleCMS refuses,
    /// a profile over ``ColorProfile/maxByteCount``): ignored, reported as
    /// ``ImageRepairs/damagedMetadata``.
    var isDamaged = false

    static let untagged = EmbeddedColor()

    /// Reads the colour information of a file of `format`.
    static func read(from data: Data, format: ImageFormat) -> EmbeddedColor {
        let icc: ICCBytes
        switch format {
        case .jpeg: icc = jpegProfile(data)
        case .png, .apng: icc = pngProfile(data)
        case .webp: icc = webPProfile(data)
        case .tiff: icc = TIFFCoder.iccProfile(data)
        case .avif: icc = AVIFCoder.statedColor(data)
        case .heic, .heif: icc = HEIFCoder.statedColor(data)
        case .jpegXL: icc = JXLCoder.statedColor(data)
        case .bmp: icc = BMPColor.read(data)
        default: icc = .none
        }
        switch icc {
        case .none: return .untagged
        case .damaged: return EmbeddedColor(isDamaged: true)
        case .bytes(let bytes):
            guard let profile = ColorProfile(iccData: bytes) else { return EmbeddedColor(isDamaged: true) }
            return EmbeddedColor(profile: profile)
        case .described(let description):
            guard let profile = description.profile() else { return EmbeddedColor(isDamaged: true) }
            return profile.isSRGB ? .untagged : EmbeddedColor(profile: profile)
        }
    }

    /// The profile bytes a container holds, before LittleCMS has looked at them, or the numbers
    /// it states instead of a profile (AVIF/HEIF `nclx`, PNG `gAMA` + `cHRM`, BMP endpoints).
    enum ICCBytes {
        case none, damaged
        case bytes(Data)
        case described(ColorDescription)
    }
}
