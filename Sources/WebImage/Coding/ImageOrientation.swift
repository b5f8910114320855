/// Which way a picture is meant to be seen, relative to how its pixels are stored: the eight
/// EXIF orientations (TIFF's and JPEG XL's own are the same eight), with the names of Apple's
/// `CGImagePropertyOrientation` and the EXIF numbers as raw values.
///
/// Decoders report it in ``Image/orientation`` without applying it;
/// ``Image/oriented()`` turns the pixels upright.
///
/// ```swift
/// let image = try ImageCoderRegistry.default.decode(data)
/// if image.orientation != .up { print("stored turned: \(image.orientation)") }
/// let upright = image.oriented()   // upright.orientation == .up
/// ```
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// As stored (EXIF 1).
    case up = 1
    /// Mirrored left to right (EXIF 2).
    case upMirrored = 2
    /// Turned half a turn (EXIF 3).
    case down = 3
    /// Mirrored top to bottom (EXIF 4).
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal (EXIF 5).
    case leftMirrored = 5
    /// Shown after a quarter turn clockwise (EXIF 6: what phones write for portrait photos).
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal (EXIF 7).
    case rightMirrored = 7
    /// Shown after a quarter turn anticlockwise (EXIF 8).
    case left = 8

    /// The orientation an EXIF, TIFF or JPEG XL value names; a value outside 1–8 (a damaged
    /// tag) is taken as ``up``, as browsers do.
    public init(exifValue: Int) {
        self = ImageOrientation(rawValue: exifValue) ?? .up
    }

    /// Whether showing the picture swaps its width and height (orientations 5–8).
    public var swapsWidthAndHeight: Bool { rawValue >= 5 }

    public var description: String {
        switch self {
        case .up: "up"
        case .upMirrored: "up-mirrored"
        case .down: "down"
        case .downMirrored: "down-mirrored"
        case .leftMirrored: "left-mirrored"
        case .right: "right"
        case .rightMirrored: "right-mirrored"
        case .left: "left"
        }
    }
}
