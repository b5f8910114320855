public import Foundation

/// The colour space an image's pixels are in, as an ICC profile: what a file embeds (JPEG's
/// `APP2 ICC_PROFILE`, PNG's `iCCP`, WebP's `ICCP`, …) or what WebImage builds from a format's
/// own description (PNG's `gAMA` + `cHRM`, AVIF's `nclx`).
///
/// Decoding converts pixels to sRGB by default (``ImageDecodingOptions/colorHandling``); the
/// profile the file carried stays readable as ``Image/sourceColorProfile``.
///
/// ```swift
/// let photo = try ImageCoderRegistry.default.decode(data)
/// if let profile = photo.sourceColorProfile {
///     print(profile.description, profile.colorSpace, profile.isSRGB)  // "Display P3", rgb, false
/// }
/// ```
public struct ColorProfile: Sendable, Hashable, CustomStringConvertible {
    /// The kind of pixels the profile describes (its header's data colour space).
    public enum ColorSpace: String, Sendable, Codable, CaseIterable {
        case rgb, gray, cmyk
        /// Lab, YCbCr, n-colour and other spaces: kept, never converted.
        case other
    }

    /// The ICC profile's bytes, as embedded (or as built, for a format's own description).
    public let data: Data
    /// The profile's data colour space.
    public let colorSpace: ColorSpace
    /// The profile's description tag (`desc`), e.g. "Display P3" or "Adobe RGB (1998)"; empty
    /// when the profile has none.
    public let description: String
    /// `true` when converting with this profile changes no 8-bit sRGB value by more than one
    /// level (an sRGB profile under another name, or a copy of one): such images skip conversion.
    public let isSRGB: Bool

    /// Checks and reads an ICC profile; `nil` for bytes LittleCMS cannot open (a damaged profile
    /// is ignored, never trusted) or that are larger than ``maxByteCount``.
    ///
    /// ```swift
    /// let p3 = ColorProfile(iccData: try Data(contentsOf: URL(fileURLWithPath: "DisplayP3.icc")))
    /// ```
    public init?(iccData: Data) {
        guard let facts = ColorTransforms.shared.facts(for: iccData) else { return nil }
        self.data = iccData
        self.colorSpace = facts.colorSpace
        self.description = facts.description
        self.isSRGB = facts.isSRGB
    }

    /// The largest profile WebImage reads (16 MiB; printer profiles with large tables are a few
    /// MiB). Larger ones are ignored with ``ImageRepairs/damagedMetadata``.
    public static let maxByteCount = 16 << 20

    /// Equal profiles have equal bytes.
    public static func == (lhs: ColorProfile, rhs: ColorProfile) -> Bool { lhs.data == rhs.data }
    public func hash(into hasher: inout Hasher) { hasher.combine(data) }
}
